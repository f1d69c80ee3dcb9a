// The shell every page shares: header, navigation, mobile menu, theme, 404, no console errors.
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

describe("site shell", () => {
  test("home renders at 1280px and 390px with no console error", async () => {
    for (const width of [1280, 390]) {
      const page = await app.newPage({ width });
      const res = await page.goto(`${app.url}/`);
      assert.equal(res.status(), 200);
      await page.waitForSelector("[data-header][data-enhanced]");
      assert.equal(await page.locator("h1").count(), 1);
      assert.equal(await page.locator(".site-header").evaluate((el) => getComputedStyle(el).position), "fixed");
      assert.equal(await page.locator(".site-header").evaluate((el) => el.getBoundingClientRect().height), 64);
      await app.screenshot(page, `home-${width}`);
      app.assertNoConsoleErrors(page);
    }
  });

  test("header links navigate and mark the current page", async () => {
    const page = await app.newPage({ width: 1280 });
    await page.goto(`${app.url}/`);
    for (const [name, path] of [["Blog", "/blog"], ["About", "/about"], ["History", "/history"], ["Home", "/"]]) {
      const [res] = await Promise.all([
        page.waitForNavigation(),
        page.locator("#site-nav").getByRole("link", { name, exact: true }).click(),
      ]);
      assert.equal(res.status(), 200, `${path} answered ${res.status()}`);
      assert.equal(page.url(), `${app.url}${path}`);
      const current = page.locator('#site-nav a[aria-current="page"]');
      assert.equal(await current.count(), 1);
      assert.equal((await current.textContent()).trim(), name);
    }
    for (const name of ["Login", "Sign Up"]) {
      assert.equal(await page.locator(".header-actions").getByRole("link", { name }).getAttribute("href"), "/auth");
    }
    app.assertNoConsoleErrors(page);
  });

  test("header gets its scrolled style after 10px", async () => {
    const page = await app.newPage({ width: 1280, height: 400 });
    await page.goto(`${app.url}/`);
    await page.waitForSelector("[data-header][data-enhanced]");
    assert.equal(await page.locator(".site-header.is-scrolled").count(), 0);
    await page.evaluate(() => {
      document.body.style.minHeight = "3000px";
      window.scrollTo(0, 40);
    });
    await page.waitForSelector(".site-header.is-scrolled");
  });

  test("mobile menu at 390px opens, traps focus and closes on Escape and outside click", async () => {
    const page = await app.newPage({ width: 390 });
    await page.goto(`${app.url}/`);
    await page.waitForSelector("[data-header][data-enhanced]");
    const toggle = page.locator("[data-nav-toggle]");
    const menu = page.locator("#mobile-menu");
    assert.equal(await toggle.getAttribute("aria-controls"), "mobile-menu");
    assert.equal(await toggle.getAttribute("aria-expanded"), "false");
    assert.equal(await menu.isVisible(), false);

    await toggle.click();
    assert.equal(await toggle.getAttribute("aria-expanded"), "true");
    await page.waitForFunction(() => document.querySelector("#mobile-menu")?.contains(document.activeElement));
    assert.equal(await menu.isVisible(), true);
    await app.screenshot(page, "menu-390");

    // Tab through more stops than the menu has: focus never leaves the toggle + menu.
    const stops = await page.locator("[data-nav-toggle], #mobile-menu a, #mobile-menu button").count();
    for (let i = 0; i < stops + 3; i++) {
      await page.keyboard.press("Tab");
      const inside = await page.evaluate(
        () => !!document.activeElement?.closest("#mobile-menu, [data-nav-toggle]"),
      );
      assert.ok(inside, `focus left the menu after ${i + 1} Tab presses`);
    }
    await page.keyboard.press("Shift+Tab");
    assert.ok(await page.evaluate(() => !!document.activeElement?.closest("#mobile-menu, [data-nav-toggle]")));

    await page.keyboard.press("Escape");
    assert.equal(await toggle.getAttribute("aria-expanded"), "false");
    await page.waitForFunction(() => document.activeElement?.matches("[data-nav-toggle]"));
    await menu.waitFor({ state: "hidden" });

    await toggle.click();
    assert.equal(await toggle.getAttribute("aria-expanded"), "true");
    await page.mouse.click(200, 700);
    await page.waitForFunction(() => document.querySelector("[data-nav-toggle]")?.getAttribute("aria-expanded") === "false");
    app.assertNoConsoleErrors(page);
  });

  test("without JavaScript the header links stay visible at 390px and 1280px", async () => {
    for (const width of [390, 1280]) {
      const page = await app.newPage({ width, javaScriptEnabled: false });
      await page.goto(`${app.url}/`);
      for (const name of ["Home", "History", "Blog", "About"]) {
        const link = page.locator("#site-nav").getByRole("link", { name, exact: true });
        assert.ok(await link.isVisible(), `${name} at ${width}px`);
        const box = await link.boundingBox();
        assert.ok(box.x >= 0 && box.x + box.width <= width && box.y + box.height <= 64, `${name} at ${width}px is off screen`);
      }
      assert.equal(await page.locator(".menu-toggle").count(), 0);
      await app.screenshot(page, `nojs-${width}`);
    }
  });

  test("theme toggle persists across reloads", async () => {
    const page = await app.newPage({ width: 1280, colorScheme: "light" });
    await page.goto(`${app.url}/`);
    await page.waitForSelector("[data-header][data-enhanced]");
    const html = page.locator("html");
    assert.equal(await html.getAttribute("data-theme"), "system");
    const toggle = page.locator(".site-header [data-theme-toggle]");
    await toggle.click();
    assert.equal(await html.getAttribute("data-theme"), "light");
    await toggle.click();
    assert.equal(await html.getAttribute("data-theme"), "dark");
    assert.match(await toggle.getAttribute("aria-label"), /^Theme: dark\. Switch to system$/);
    assert.equal(await page.evaluate(() => getComputedStyle(document.documentElement).colorScheme), "dark");
    await page.reload();
    assert.equal(await html.getAttribute("data-theme"), "dark");
    assert.equal(await page.evaluate(() => localStorage.getItem("theme")), "dark");
    await app.screenshot(page, "home-1280-dark");
    await page.waitForSelector("[data-header][data-enhanced]");
    await toggle.click();
    await page.reload();
    assert.equal(await html.getAttribute("data-theme"), "system");
    app.assertNoConsoleErrors(page);
  });

  test("the offline banner shows while offline and says when the connection is back", async () => {
    const page = await app.newPage({ width: 1280 });
    // A page without islands, so no chunk is still loading when the network goes away.
    await page.goto(`${app.url}/terms-of-service`);
    await page.waitForSelector("[data-header][data-enhanced]");
    const banner = page.locator(".offline-banner");
    assert.equal(await banner.isVisible(), false);
    await page.context().setOffline(true);
    await page.getByRole("status").filter({ hasText: "You're currently offline. Some features may not be available." }).waitFor();
    await app.screenshot(page, "offline-1280");
    await page.context().setOffline(false);
    await page.getByRole("status").filter({ hasText: "Connection restored! You're back online." }).waitFor();
    await banner.waitFor({ state: "hidden", timeout: 5000 });
  });

  test("the FAQ has 10 entries and opens one at a time", async () => {
    const page = await app.newPage({ width: 1280 });
    await page.goto(`${app.url}/`);
    const items = page.locator("#faq details");
    assert.equal(await items.count(), 10);
    const openCount = () => page.locator("#faq details[open]").count();
    assert.equal(await openCount(), 0);
    await items.nth(0).locator("summary").click();
    assert.equal(await items.nth(0).getAttribute("open"), "");
    await items.nth(2).locator("summary").click();
    assert.equal(await openCount(), 1);
    assert.equal(await items.nth(0).getAttribute("open"), null);
    assert.equal(await items.nth(2).getAttribute("open"), "");
    await app.screenshot(page, "faq-1280");
    // Clicking the open one closes it.
    await items.nth(2).locator("summary").click();
    assert.equal(await openCount(), 0);
    // Keyboard works too.
    await items.nth(5).locator("summary").focus();
    await page.keyboard.press("Enter");
    assert.equal(await items.nth(5).getAttribute("open"), "");
    assert.ok(await page.locator("#faq").getByRole("link", { name: /about/i }).count() >= 1);
    app.assertNoConsoleErrors(page);
  });

  test("an unknown path shows the 404 page", async () => {
    const page = await app.newPage({ width: 1280 });
    const res = await page.goto(`${app.url}/no/such/page`);
    assert.equal(res.status(), 404);
    assert.match(await page.title(), /404 Page Not Found/);
    await app.screenshot(page, "404-1280");
  });
});
