// API keys in the Profile, as a developer uses them: create a key with a name, copy it (the
// real clipboard), use it from a program (no cookie) against /api/me/quota, revoke it with
// the keyboard after confirming, and see the program refused. Errors in plain words; the
// tab at 390 px and 1280 px. The administrator overrides quotas in the dashboard.
import assert from "node:assert/strict";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { artifactsDir, startApp } from "./harness.mjs";

let app;
before(async () => {
  app = await startApp();
  await app.cli(["user", "create", "--username", "devon", "--email", "devon@example.com"], "devon-pass\n");
  await app.cli(["user", "create", "--username", "hoarder", "--email", "hoarder@example.com"], "hoarder-pass\n");
  await app.cli(["user", "create", "--username", "chief", "--email", "chief@example.com", "--admin"], "admin-pass\n");
});
after(async () => {
  await app?.stop();
});

async function signIn(page, username, password) {
  await page.goto(`${app.url}/auth`);
  await page.waitForSelector("[data-testid=auth-screen]");
  await page.getByLabel("Username", { exact: true }).fill(username);
  await page.getByLabel("Password", { exact: true }).fill(password);
  await Promise.all([page.waitForURL(`${app.url}/`), page.getByRole("button", { name: "Sign In" }).click()]);
}

/** Opens the API keys tab through the link the API docs give. */
async function openKeys(page) {
  const target = `${app.url}/profile#api-keys`;
  // Going to the same address with a fragment would not load the page again.
  if (page.url() === target) await page.reload();
  else await page.goto(target);
  await page.waitForSelector("[data-testid=profile]");
  const tab = page.getByRole("tab", { name: "API keys" });
  assert.equal(await tab.getAttribute("aria-selected"), "true", "the #api-keys link opens the tab");
  await page.getByRole("heading", { name: "Your keys" }).waitFor();
}

/** A program's request: the key in a header, no cookie, no Origin. */
function asProgram(key) {
  return fetch(`${app.url}/api/me/quota`, { headers: { authorization: `Bearer ${key}` } });
}

describe("API keys in the profile", () => {
  test("create a key in the profile, copy it, use it, revoke it", async () => {
    const page = await app.newPage({ width: 1280 });
    await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: app.url });
    await signIn(page, "devon", "devon-pass");
    await openKeys(page);
    await page.getByText("You have no API keys yet.").waitFor();
    await page.getByText(/Your keys share one quota: 30 requests a minute/).waitFor();

    // Create, with the keyboard.
    await page.getByLabel("Key name").focus();
    await page.keyboard.type("Home server script");
    await page.keyboard.press("Enter");
    const heading = page.getByRole("heading", { name: "Copy your new key now" });
    await heading.waitFor();
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), "Copy your new key now", "focus moves to the new key");
    await page.getByRole("status").filter({ hasText: "shown only once" }).waitFor({ state: "attached" });
    const shown = await page.getByLabel("Your new API key").inputValue();
    assert.match(shown, /^rf_[A-Za-z0-9]{40}$/);

    // Copy: the clipboard really holds the key, and the page says so.
    await page.getByRole("button", { name: "Copy Key" }).click();
    await page.getByRole("button", { name: "Copied" }).waitFor();
    await page.getByText("Copied to your clipboard.").waitFor();
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    assert.equal(copied, shown);
    await app.screenshot(page, "api-keys-created-1280");
    await app.assertAccessible(page, { include: "[data-testid=profile]" });

    // The list shows the name and the visible prefix, never the secret.
    const list = page.getByRole("list", { name: "Your keys" });
    const item = list.getByRole("listitem").filter({ hasText: "Home server script" });
    await item.getByText(`${copied.slice(0, 11)}…`).waitFor();
    assert.ok(!(await list.textContent()).includes(copied));
    await item.getByText("never used").waitFor();

    // The copied key works from a program with no cookie.
    const ok = await asProgram(copied);
    assert.equal(ok.status, 200, await ok.clone().text());
    assert.equal(ok.headers.get("ratelimit-limit"), "30");
    assert.equal((await ok.json()).perMinute.limit, 30);

    // Done hides it for good; a reload shows it was used.
    await page.getByRole("button", { name: "Done, I Saved It" }).click();
    assert.equal(await page.getByLabel("Your new API key").count(), 0);
    await openKeys(page);
    await item.getByText(/last used/).waitFor();
    assert.ok(!(await page.content()).includes(copied), "the secret is not shown again");

    // Revoke, with the keyboard: the dialog asks first; Cancel keeps the key.
    const revoke = page.getByRole("button", { name: "Revoke Home server script" });
    await revoke.focus();
    await page.keyboard.press("Enter");
    const dialog = page.getByRole("dialog", { name: "Revoke this key?" });
    await dialog.waitFor();
    await dialog.getByText(`${copied.slice(0, 11)}…`).waitFor();
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), "Cancel", "the safe choice has focus");
    await app.screenshot(page, "api-keys-revoke-1280");
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "hidden" });
    assert.equal((await asProgram(copied)).status, 200, "cancelled: the key still works");

    await revoke.focus();
    await page.keyboard.press("Enter");
    await dialog.waitFor();
    await page.keyboard.press("Tab");
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), "Revoke Key");
    await page.keyboard.press("Enter");
    await page.getByText("You have no API keys yet.").waitFor();
    await page.getByRole("status").filter({ hasText: "“Home server script” revoked" }).waitFor({ state: "attached" });
    await page.waitForFunction(() => document.activeElement?.textContent === "Your keys");

    // Refused at once.
    const refused = await asProgram(copied);
    assert.equal(refused.status, 401);
    assert.equal((await refused.json()).message, "Invalid or revoked API key");
    app.assertNoConsoleErrors(page);
  });

  test("the key limit is explained in plain words; the tab on a phone", async () => {
    const phone = await app.newPage({ width: 390 });
    await signIn(phone, "hoarder", "hoarder-pass");
    // Nineteen keys made by a script with the session, then the twentieth in the profile:
    // 20 is both the most live keys and the most made in an hour.
    const made = await phone.evaluate(async () => {
      let n = 0;
      for (let i = 1; i <= 19; i++) {
        const res = await fetch("/api/keys", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: `Script ${i}` }) });
        if (res.status === 201) n++;
      }
      return n;
    });
    assert.equal(made, 19);
    await openKeys(phone);
    await phone.getByLabel("Key name").fill("Phone shortcut with a rather long name that wraps");
    await phone.getByRole("button", { name: "Create Key" }).click();
    const field = phone.getByLabel("Your new API key");
    await field.waitFor();
    await app.screenshot(phone, "api-keys-created-390");
    await phone.screenshot({ path: path.join(artifactsDir, "api-keys-390-full.png"), fullPage: true });
    const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.equal(overflow, 0, "nothing wider than the phone");
    await app.assertAccessible(phone, { include: "[data-testid=profile]" });

    await phone.getByLabel("Key name").fill("One too many");
    await phone.getByRole("button", { name: "Create Key" }).click();
    const alert = phone.getByRole("alert").filter({ hasText: "API keys" });
    await alert.waitFor();
    // Twenty live keys, all made this hour: the limit that matters (revoke one) is the one said.
    assert.equal((await alert.textContent()).trim(), "You already have 20 API keys. Revoke one you no longer use first.");
    assert.equal(await phone.getByLabel("Key name").evaluate((el) => el === document.activeElement), true, "focus back on the name");
    // ...and not hidden under the fixed header.
    // (scrolling is smooth: wait for it to settle rather than read it mid-way)
    await phone.waitForFunction(() => {
      const header = document.querySelector("header")?.getBoundingClientRect();
      const field = document.activeElement?.getBoundingClientRect();
      return Boolean(header && field && field.top >= header.bottom);
    }, null, { timeout: 5000 });
    await app.screenshot(phone, "api-keys-limit-390");

    const desk = await app.newPage({ width: 1280 });
    await signIn(desk, "hoarder", "hoarder-pass");
    await openKeys(desk);
    await desk.screenshot({ path: path.join(artifactsDir, "api-keys-list-1280-full.png"), fullPage: true });
    phone.consoleErrors = phone.consoleErrors.filter((e) => !/status of 409/.test(e));
    app.assertNoConsoleErrors(phone);
    app.assertNoConsoleErrors(desk);
  });

  test("the administrator overrides a person's and a key's quota in the dashboard", async () => {
    // devon has a key, made by a script with the session.
    const owner = await app.newPage({ width: 1280 });
    await signIn(owner, "devon", "devon-pass");
    const made = await owner.evaluate(async () => (await fetch("/api/keys", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "Nightly sync" }) })).status);
    assert.equal(made, 201);

    const page = await app.newPage({ width: 1280, reducedMotion: "reduce" });
    await page.goto(`${app.url}/admin`);
    await page.fill("#admin-username", "chief");
    await page.fill("#admin-password", "admin-pass");
    await Promise.all([page.waitForURL(`${app.url}/admin/dashboard`), page.click("button[type=submit]")]);
    await page.getByRole("link", { name: "API quota overrides" }).click();
    const person = page.getByRole("group", { name: "Override for a person" });
    await person.getByLabel("Username").fill("devin");
    await person.getByLabel("Requests per minute").fill("120");
    await Promise.all([page.waitForURL(/\/admin\/api-quotas\/person/), person.getByRole("button", { name: "Save Person Override" }).click()]);
    await page.getByRole("alert").filter({ hasText: "There is no user named “devin”" }).waitFor();
    assert.equal(await page.getByRole("group", { name: "Override for a person" }).getByLabel("Requests per minute").inputValue(), "120", "what was typed is kept");
    await page.getByRole("group", { name: "Override for a person" }).getByLabel("Username").fill("devon");
    await Promise.all([page.waitForURL(/quota=saved/), page.getByRole("button", { name: "Save Person Override" }).click()]);
    await page.getByText("API quota override saved.").waitFor();
    const people = page.getByRole("table", { name: "People with an API quota override" });
    await people.getByRole("row", { name: /devon 120 default default/ }).waitFor();

    const key = page.getByRole("group", { name: "Override for a key" });
    await key.getByLabel("Key", { exact: true }).selectOption({ label: (await key.locator("option", { hasText: "devon: Nightly sync" }).textContent()).trim() });
    await key.getByLabel("Requests at once").fill("5");
    await Promise.all([page.waitForURL(/quota=saved/), key.getByRole("button", { name: "Save Key Override" }).click()]);
    const keys = page.getByRole("table", { name: "API keys with their own quota" });
    await keys.getByRole("row", { name: /Nightly sync .* devon default default 5/ }).waitFor();
    await page.locator("#api-quotas").scrollIntoViewIfNeeded();
    await app.screenshot(page, "admin-quotas-1280");
    await page.locator("#api-quotas").screenshot({ path: path.join(artifactsDir, "admin-quotas-heading-1280.png") });
    await app.assertAccessible(page, { include: "main" });

    // Edit fills the form; Remove takes the key back to the person's quota.
    await page.getByRole("link", { name: "Edit the override of key Nightly sync" }).click();
    assert.equal(await page.getByRole("group", { name: "Override for a key" }).getByLabel("Requests at once").inputValue(), "5");
    await Promise.all([page.waitForURL(/quota=saved/), page.getByRole("button", { name: "Remove the override of key Nightly sync" }).click()]);
    await page.getByText("None: every key counts with its person.").waitFor();
    page.consoleErrors = page.consoleErrors.filter((e) => !/status of 400 .*api-quotas\/person/.test(e));
    app.assertNoConsoleErrors(page);

    // (reduced motion: the jump to #api-quotas is instant, so the screenshot is not mid-scroll)
    const phone = await app.newPage({ width: 390, reducedMotion: "reduce" });
    await phone.goto(`${app.url}/admin`);
    await phone.fill("#admin-username", "chief");
    await phone.fill("#admin-password", "admin-pass");
    await Promise.all([phone.waitForURL(`${app.url}/admin/dashboard`), phone.click("button[type=submit]")]);
    await phone.goto(`${app.url}/admin/dashboard?edit_user=devon#api-quotas`);
    assert.equal(await phone.getByRole("group", { name: "Override for a person" }).getByLabel("Requests per minute").inputValue(), "120");
    await app.screenshot(phone, "admin-quotas-390");
    await phone.screenshot({ path: path.join(artifactsDir, "admin-quotas-390-full.png"), fullPage: true });
    const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.equal(overflow, 0, "nothing wider than the phone");
    await app.assertAccessible(phone, { include: "main" });
    app.assertNoConsoleErrors(phone);
  });
});
