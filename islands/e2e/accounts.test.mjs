// Accounts in a real browser: an admin turns on email verification in the dashboard, a
// visitor signs up, the mailed link (from the outbox, no SMTP) verifies the address, they
// sign in, see their name in the header, use the profile, and sign out.
import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { startApp } from "./harness.mjs";

let app;
before(async () => {
  app = await startApp();
  await app.cli(["user", "create", "--username", "chief", "--email", "chief@example.com", "--admin"], "admin-pass\n");
});
after(async () => {
  await app?.stop();
});

/** The verification link in the newest outbox mail (quoted-printable soft breaks undone). */
async function mailedLink() {
  const dir = path.join(app.dataDir, "outbox");
  const files = (await readdir(dir)).filter((f) => f.endsWith(".eml")).sort();
  assert.ok(files.length > 0, "a mail in the outbox");
  const raw = (await readFile(path.join(dir, files.at(-1)), "utf8")).replace(/=\r?\n/g, "");
  const m = /(https?:\/\/[^\s"<>]+\/verify-email\/[A-Za-z0-9_-]+)/.exec(raw);
  assert.ok(m, "a verification link in the mail");
  return m[1];
}

describe("accounts", () => {
  test("admin requires verification; sign up, verify by mail, sign in, profile, sign out", async () => {
    // The admin signs in on /admin and switches verification on.
    const admin = await app.newPage({ width: 1280 });
    await admin.goto(`${app.url}/admin/dashboard`);
    assert.equal(new URL(admin.url()).pathname, "/admin", "guests are sent to the admin login");
    await admin.fill("#admin-username", "chief");
    await admin.fill("#admin-password", "admin-pass");
    await Promise.all([admin.waitForURL(`${app.url}/admin/dashboard`), admin.click("button[type=submit]")]);
    await admin.check("input[name=require_email_verification]");
    await Promise.all([admin.waitForURL(/saved=1/), admin.click("text=Save Settings")]);
    assert.match(await admin.locator(".admin-notice").textContent(), /Settings saved/);
    await app.screenshot(admin, "admin-dashboard-1280");
    app.assertNoConsoleErrors(admin);

    // A visitor signs up.
    const page = await app.newPage({ width: 390 });
    await page.goto(`${app.url}/auth`);
    await page.waitForSelector("[data-testid=auth-screen]");
    await app.screenshot(page, "auth-390");
    await page.getByRole("tab", { name: "Sign Up" }).click();
    await page.getByLabel("Username", { exact: true }).fill("moviebuff");
    await page.getByLabel("Email", { exact: true }).fill("moviebuff@example.com");
    await page.getByLabel("Password", { exact: true }).fill("popcorn1");
    await page.getByLabel("Confirm Password", { exact: true }).fill("popcorn2");
    await page.getByRole("button", { name: "Create Account" }).click();
    await page.getByText("Passwords do not match").waitFor();
    await page.getByRole("button", { name: "Show confirm password" }).click();
    assert.equal(await page.getByLabel("Confirm Password", { exact: true }).getAttribute("type"), "text");
    await page.getByLabel("Confirm Password", { exact: true }).fill("popcorn1");
    await Promise.all([page.waitForURL(/email-verification-pending/), page.getByRole("button", { name: "Create Account" }).click()]);
    await page.waitForSelector("[data-testid=pending-email]");
    assert.equal(await page.getByTestId("pending-email").textContent(), "moviebuff@example.com");
    await app.screenshot(page, "pending-390");

    // Signing in before verifying goes back to the pending screen.
    await page.goto(`${app.url}/auth`);
    await page.waitForSelector("[data-testid=auth-screen]");
    await page.getByLabel("Username", { exact: true }).fill("moviebuff");
    await page.getByLabel("Password", { exact: true }).fill("popcorn1");
    await Promise.all([page.waitForURL(/email-verification-pending/), page.getByRole("button", { name: "Sign In" }).click()]);

    // The mailed link verifies.
    const link = await mailedLink();
    assert.ok(link.startsWith(`${app.url}/verify-email/`), link);
    await page.goto(link);
    // Success, or the island's error (whose words the failure should carry), whichever comes.
    const done = page.getByRole("heading", { name: "Email Verified!" }).or(page.locator(".verify-error"));
    await done.first().waitFor({ timeout: 60_000 });
    const failed = await page.locator(".verify-error").count();
    assert.equal(failed, 0, `verification failed: ${failed ? await page.locator(".verify-error").innerText() : ""}`);
    await app.screenshot(page, "verified-390");
    await Promise.all([page.waitForURL(`${app.url}/auth`), page.getByRole("link", { name: "Continue to Login" }).click()]);

    // Sign in; the header shows the name.
    await page.waitForSelector("[data-testid=auth-screen]");
    await page.evaluate(() => localStorage.setItem("freeUsageCount", "1"));
    await page.getByLabel("Username", { exact: true }).fill("moviebuff");
    await page.getByLabel("Password", { exact: true }).fill("popcorn1");
    await Promise.all([page.waitForURL(`${app.url}/`), page.getByRole("button", { name: "Sign In" }).click()]);
    assert.equal((await page.locator("[data-user-menu-button] .user-name").textContent()).trim(), "moviebuff");
    assert.equal(await page.evaluate(() => localStorage.getItem("freeUsageCount")), null, "signing in clears the counter");
    // /auth now sends a signed-in person home.
    await page.goto(`${app.url}/auth`);
    assert.equal(page.url(), `${app.url}/`);

    // Profile: the side card, and the settings form saves.
    const wide = await app.newPage({ width: 1280 });
    await wide.context().addCookies(await page.context().cookies());
    await wide.goto(`${app.url}/profile`);
    await wide.waitForSelector("[data-testid=profile]");
    assert.equal(await wide.locator(".profile-name").textContent(), "moviebuff");
    await wide.getByRole("tab", { name: "Settings" }).click();
    await wide.getByLabel("Display name", { exact: true }).fill("Movie Buff");
    await wide.getByLabel("Default AI engine", { exact: true }).selectOption("library");
    await wide.getByRole("button", { name: "Save Changes" }).click();
    await wide.getByText("Your changes have been saved.").waitFor();
    assert.equal(await wide.locator(".profile-name").textContent(), "Movie Buff");
    await app.screenshot(wide, "profile-1280");
    await wide.reload();
    await wide.waitForSelector("[data-testid=profile]");
    assert.equal(await wide.locator(".profile-name").textContent(), "Movie Buff");
    app.assertNoConsoleErrors(wide);

    // Sign out from the header.
    await page.goto(`${app.url}/profile`);
    await page.waitForSelector("[data-header][data-enhanced]");
    // At 390px the account actions live in the mobile menu.
    await page.locator("[data-nav-toggle]").click();
    const menu = page.locator("#mobile-menu");
    await menu.waitFor({ state: "visible" });
    assert.equal((await menu.locator(".user-name").textContent()).trim(), "moviebuff");
    await Promise.all([page.waitForURL(`${app.url}/`), menu.getByRole("button", { name: "Logout" }).click()]);
    await page.getByText("You have been successfully logged out.").first().waitFor({ state: "attached" });
    await page.locator(".header-actions a[href=\"/auth\"]").first().waitFor({ state: "attached" });
    const me = await page.evaluate(async () => (await fetch("/api/user")).status);
    assert.equal(me, 401);
    page.consoleErrors = page.consoleErrors.filter((e) => !/status of 40[13]/.test(e));
    app.assertNoConsoleErrors(page);
  });

  test("Google without credentials shows the SPEC's toast, not an error page", async () => {
    const page = await app.newPage({ width: 1280 });
    await page.goto(`${app.url}/auth`);
    await page.waitForSelector("[data-testid=auth-screen]");
    await Promise.all([page.waitForURL(/\/auth/), page.getByRole("button", { name: "Continue with Google" }).click()]);
    await page.getByText("Google authentication is currently unavailable. Please try again later.").waitFor();
    // The server's fallback already shows the text; the island then tidies the address bar.
    await page.waitForFunction(() => location.search === "", null, { timeout: 10_000 }).catch(() => {});
    assert.equal(new URL(page.url()).search, "", "the error code is tidied from the address bar");
    await app.screenshot(page, "auth-google-unavailable-1280");
    app.assertNoConsoleErrors(page);
  });
});
