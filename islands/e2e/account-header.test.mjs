// The header for a signed-in user: the user menu (username truncated at 120px, Profile
// Settings, Logout), keyboard behaviour, and logging out.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { startApp } from "./harness.mjs";

let app;
before(async () => {
  app = await startApp();
});
after(async () => {
  await app?.stop();
});

/** Registers (and so signs in) through the API from inside the page, like the auth screen does. */
async function signUp(page, username) {
  await page.goto(`${app.url}/`);
  const res = await page.evaluate(async (username) => {
    const r = await fetch("/api/register", {
      method: "POST",
      credentials: "include",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ username, email: `${username}@example.com`, password: "correct horse" }),
    });
    return { status: r.status, body: await r.text() };
  }, username);
  assert.ok(res.status < 300, `register answered ${res.status}: ${res.body}`);
  // Somewhere other than exactly "/", so the redirect after logout is a real navigation.
  await page.goto(`${app.url}/?signed-in`);
  await page.waitForSelector("[data-header][data-enhanced]");
}

describe("signed-in header", () => {
  test("user menu shows the username, opens, closes on Escape and outside click, and logs out", async () => {
    const page = await app.newPage({ width: 1280 });
    const username = "a_very_long_username_for_the_menu";
    await signUp(page, username);
    await page.evaluate(() => localStorage.setItem("freeUsageCount", "1"));

    const button = page.locator("[data-user-menu-button]");
    assert.equal((await button.locator(".user-name").textContent()).trim(), username);
    assert.ok((await button.locator(".user-name").evaluate((el) => el.getBoundingClientRect().width)) <= 120);
    assert.equal(await button.locator(".user-name").evaluate((el) => getComputedStyle(el).textOverflow), "ellipsis");
    assert.equal(await page.locator(".header-actions").getByRole("link", { name: "Login" }).count(), 0);

    assert.equal(await button.getAttribute("aria-expanded"), "false");
    await button.click();
    assert.equal(await button.getAttribute("aria-expanded"), "true");
    const profile = page.getByRole("link", { name: "Profile Settings" });
    assert.equal(await profile.isVisible(), true);
    assert.equal(await profile.getAttribute("href"), "/profile");
    await app.screenshot(page, "user-menu-1280");
    await page.keyboard.press("Escape");
    assert.equal(await button.getAttribute("aria-expanded"), "false");
    assert.equal(await profile.isVisible(), false);
    assert.ok(await button.evaluate((el) => el === document.activeElement));

    await button.click();
    await page.mouse.click(600, 500);
    assert.equal(await button.getAttribute("aria-expanded"), "false");

    await button.click();
    await Promise.all([
      page.waitForURL((url) => url.href === `${app.url}/`),
      page.getByRole("button", { name: "Logout" }).click(),
    ]);
    await page.getByRole("status").filter({ hasText: "You have been successfully logged out." }).waitFor();
    await page.waitForSelector("[data-header][data-enhanced]");
    assert.equal(await page.locator("[data-user-menu-button]").count(), 0);
    assert.equal(await page.locator(".header-actions").getByRole("link", { name: "Login" }).count(), 1);
    assert.equal(await page.evaluate(() => localStorage.getItem("freeUsageCount")), null);
    const user = await page.evaluate(async () => (await fetch("/api/user", { credentials: "include" })).status);
    assert.equal(user, 401);
    // Our own probe of /api/user answering 401 is the signed-out state, not an error.
    app.assertNoConsoleErrors(page, { allow: [/status of 401 .*\/api\/user\)$/] });
  });

  test("the mobile menu holds the account at 390px", async () => {
    const page = await app.newPage({ width: 390 });
    await signUp(page, "mobile_user");
    assert.equal(await page.locator("[data-user-menu-button]").isVisible(), false);
    await page.locator("[data-nav-toggle]").click();
    const menu = page.locator("#mobile-menu");
    await menu.waitFor({ state: "visible" });
    assert.equal((await menu.locator(".user-name").textContent()).trim(), "mobile_user");
    assert.equal(await menu.getByRole("link", { name: "Profile Settings" }).getAttribute("href"), "/profile");
    assert.equal(await menu.getByRole("link", { name: "Login" }).count(), 0);
    await app.screenshot(page, "user-menu-390");
    await Promise.all([
      page.waitForURL((url) => url.href === `${app.url}/`),
      menu.getByRole("button", { name: "Logout" }).click(),
    ]);
    await page.waitForSelector("[data-header][data-enhanced]");
    await page.locator("[data-nav-toggle]").click();
    assert.equal(await page.locator("#mobile-menu").getByRole("link", { name: "Login" }).count(), 1);
    app.assertNoConsoleErrors(page);
  });
});
