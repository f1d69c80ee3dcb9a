// What a person notices (issue 42), at 390 and 1280 px in real Chromium: toasts and dialogs,
// the result header, the mobile menu, the File Too Large view, tooltips, the footer's one
// animation, and the admin's third-party analytics tag (loaded with its parameters when
// configured; no third-party request at all without one).
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { startApp } from "./harness.mjs";
import { fakeServer, makePng } from "./identify-fixtures.mjs";

let app;
before(async () => {
  app = await startApp({ env: { REELFIND_LIBRARY_DEMO: "false" } });
});
after(async () => {
  await app?.stop();
});

const SHARED = "AAAAAAAAAAAAAAAAAAAAAA";
const RESULT = {
  identificationId: SHARED,
  id: 603,
  tmdbId: 603,
  title: "The Matrix",
  year: "1999",
  type: "movie",
  runtime: "2h 16m",
  director: "Lana Wachowski",
  rating: 8.2,
  confidence: 0.93,
  confidenceScore: 0.93,
  genres: ["Action", "Science Fiction"],
  description: "A hacker learns what the Matrix is.",
  cast: [],
  trailers: [],
  streamingPlatforms: { flatrate: [], rent: [], buy: [] },
  createdAt: "2026-11-28T10:00:00Z",
};

/** A page showing the result view of a shared link (the answer comes from the test). */
async function resultPage(width) {
  const page = await app.newPage({ width });
  await page.route(`**/api/identification/${SHARED}`, (r) =>
    r.fulfill({ status: 200, contentType: "application/json", body: JSON.stringify(RESULT) }),
  );
  await page.goto(`${app.url}/?id=${SHARED}`);
  await page.locator(".id-result-bar").waitFor();
  return page;
}

const rect = (page, selector) => page.locator(selector).first().evaluate((el) => el.getBoundingClientRect().toJSON());
const apart = (a, b) => a.right <= b.left || b.right <= a.left || a.bottom <= b.top || b.bottom <= a.top;
/** The space between two boxes that do not overlap (0 when they do). */
const gap = (a, b) => Math.max(b.left - a.right, a.left - b.right, b.top - a.bottom, a.top - b.bottom, 0);

for (const width of [390, 1280]) {
  test(`toasts: never over the primary button, gone when over, above a dialog (${width} px)`, async () => {
    const page = await app.newPage({ width });
    await page.goto(`${app.url}/auth`);
    await page.getByRole("tab", { name: "Sign Up" }).click();
    await page.getByRole("textbox", { name: "Username" }).fill(`toast${width}`);
    await page.getByRole("textbox", { name: "Email" }).fill(`toast${width}@example.com`);
    await page.locator("input[id$=su-pass]").fill("abc");
    await page.getByRole("textbox", { name: "Confirm Password" }).fill("abc");
    await page.getByRole("button", { name: "Create Account" }).click();
    const toast = page.locator(".toast", { hasText: "Weak Password" });
    await toast.waitFor();
    await page.waitForTimeout(300); // its entry animation
    assert.ok(apart(await rect(page, ".toast"), await rect(page, ".auth-submit")), "the toast leaves Create Account visible");
    await app.screenshot(page, `noticed-toast-auth-${width}`);

    // The situation is over: the password is long enough now. The toast goes at once.
    await page.locator("input[id$=su-pass]").fill("secret12");
    await page.getByRole("textbox", { name: "Confirm Password" }).fill("secret12");
    await toast.waitFor({ state: "detached" });
    await page.getByRole("button", { name: "Create Account" }).click();
    await page.locator("dialog.onboarding-dialog[open]").waitFor();
    assert.equal(await page.locator(".toast").count(), 0, "no old toast behind the welcome dialog");
    await app.screenshot(page, `noticed-welcome-${width}`);

    // A toast shown while a dialog is open is above the dialog and its backdrop: the point
    // at its middle is the toast itself, and its close button takes a click.
    const view = await resultPage(width);
    await view.getByRole("button", { name: /Share Experience/ }).click();
    const dialog = view.locator("dialog[open]");
    await dialog.waitFor();
    await dialog.getByRole("button", { name: /Submit/ }).click();
    const over = view.locator(".toast").first();
    await over.waitFor();
    await view.waitForTimeout(300);
    const onTop = await over.evaluate((el) => {
      const r = el.getBoundingClientRect();
      return el.contains(document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2));
    });
    assert.ok(onTop, "the toast is above the dialog");
    await app.screenshot(view, `noticed-toast-over-dialog-${width}`);
    await over.locator(".toast-close").click();
    await over.waitFor({ state: "detached" });
    assert.ok(await dialog.isVisible(), "closing the toast leaves the dialog open");
    app.assertNoConsoleErrors(page, { allow: [/status of 401 .*\/api\/user/] });
  });

  test(`the result header: labelled back button, badge clear of Review (${width} px)`, async () => {
    const page = await resultPage(width);
    await page.waitForTimeout(400);
    const back = page.locator(".id-back");
    assert.match((await back.innerText()).trim(), /New Search/);
    const label = await rect(page, ".id-back-label");
    assert.ok(label.width > 20, "the back button's words are on screen");
    const badge = await rect(page, ".id-badge-success");
    const review = await rect(page, ".id-review-btn");
    assert.ok(gap(badge, review) >= 6, `badge and Review ${gap(badge, review)} px apart`);
    const bar = await rect(page, ".id-result-bar");
    for (const r of [badge, review, await rect(page, ".id-back")]) {
      assert.ok(r.left >= bar.left && r.right <= bar.right, "inside the bar");
    }
    await app.screenshot(page, `noticed-result-header-${width}`);
    app.assertNoConsoleErrors(page, { allow: [/status of 401 .*\/api\/user/] });
  });

  test(`File Too Large names one limit, the server's (${width} px)`, async () => {
    const page = await app.newPage({ width });
    await page.route("**/api/identify", (r) =>
      r.fulfill({
        status: 413,
        contentType: "application/json",
        body: JSON.stringify({ error: "File too large. Maximum allowed size is 40MB.", message: "File too large. Maximum allowed size is 40MB.", code: "file_too_large" }),
      }),
    );
    await page.goto(`${app.url}/`);
    await page.locator(".id-file-input").setInputFiles({ name: "scene.png", mimeType: "image/png", buffer: makePng(320, 180, 3) });
    await page.getByRole("button", { name: "Identify Now" }).click();
    const view = page.getByTestId("error-view");
    await view.waitFor();
    assert.equal((await view.locator("h2").innerText()).trim(), "File Too Large");
    const text = await view.evaluate((el) => {
      const c = el.cloneNode(true);
      c.querySelector("details")?.remove(); // the raw answer for support
      return c.textContent;
    });
    const limits = new Set(Array.from(text.matchAll(/(\d+)\s*MB/g), (m) => m[1]));
    assert.deepEqual([...limits], ["40"], text);
    await app.screenshot(page, `noticed-too-large-${width}`);
  });

  test(`tooltips: 700 ms delay, 300 ms skip, and from the keyboard (${width} px)`, async () => {
    const page = await app.newPage({ width });
    await page.goto(`${app.url}/about`);
    // When the tooltip appears and hides, and when the pointer arrived, in the page's own clock.
    await page.evaluate(() => {
      const w = window;
      w.__tip = { shown: [], hidden: [], over: [] };
      document.addEventListener("pointerover", (e) => e.target.closest?.("[data-tooltip]") && w.__tip.over.push(performance.now()), true);
      new MutationObserver(() => {
        const t = document.querySelector(".tooltip");
        if (!t) return;
        const list = t.hidden ? w.__tip.hidden : w.__tip.shown;
        list.push(performance.now());
      }).observe(document.body, { subtree: true, attributes: true, attributeFilter: ["hidden"], childList: true });
    });
    const tip = page.locator(".tooltip:not([hidden])");
    // At once (the page scrolls smoothly otherwise), and after the footer's entrance.
    await page.evaluate(() => window.scrollTo({ top: document.body.scrollHeight, behavior: "instant" }));
    await page.waitForFunction(() => document.getAnimations().every((a) => a.playState === "finished" || a.animationName !== "footer-in"));
    const links = page.locator(".social-links a");
    await links.nth(0).hover();
    await tip.waitFor();
    assert.equal(await tip.innerText(), "GitHub");
    let t = await page.evaluate(() => window.__tip);
    const delay = t.shown[0] - t.over[0];
    assert.ok(delay >= 690, `shown ${Math.round(delay)} ms after the pointer came (700 ms delay)`);
    await app.screenshot(page, `noticed-tooltip-${width}`);

    // Straight on to the next icon: within the 300 ms skip delay it opens at once.
    await links.nth(1).hover();
    await page.locator(".tooltip:not([hidden])", { hasText: "X (Twitter)" }).waitFor();
    t = await page.evaluate(() => window.__tip);
    const skip = t.shown.at(-1) - t.over.at(-1);
    assert.ok(skip < 200, `the next one opened ${Math.round(skip)} ms after the pointer came`);

    // Away for longer than the skip delay: the full delay again.
    await page.mouse.move(5, 5);
    await page.waitForTimeout(500);
    await links.nth(2).hover();
    await page.locator(".tooltip:not([hidden])", { hasText: "LinkedIn" }).waitFor();
    t = await page.evaluate(() => window.__tip);
    assert.ok(t.shown.at(-1) - t.over.at(-1) >= 690, "after a pause, the delay again");
    await page.keyboard.press("Escape");
    await tip.waitFor({ state: "detached" }).catch(() => undefined);
    assert.equal(await tip.count(), 0, "Escape closes it");

    // The keyboard: Tab to an icon-only button in the header and its tooltip follows.
    await page.mouse.move(5, 400);
    await page.evaluate(() => window.scrollTo(0, 0));
    const target = width <= 768 ? ".menu-toggle" : ".site-header .theme-toggle";
    await page.locator(".skip-link").first().focus();
    for (let i = 0; i < 15; i++) {
      if (await page.locator(target).evaluate((el) => el === document.activeElement)) break;
      await page.keyboard.press("Tab");
    }
    assert.ok(await page.locator(target).evaluate((el) => el === document.activeElement), "reached by Tab");
    await tip.waitFor();
    assert.match(await tip.innerText(), width <= 768 ? /Open menu/ : /^Theme: /);
    await app.screenshot(page, `noticed-tooltip-keyboard-${width}`);
    app.assertNoConsoleErrors(page, { allow: [/status of 401 .*\/api\/user/] });
  });

  test(`the footer animates once when 10% visible (${width} px)`, async () => {
    const page = await app.newPage({ width });
    await page.goto(`${app.url}/about`);
    const footer = page.locator(".site-footer");
    // Waiting below the fold (the observer's first report puts it there).
    await page.waitForFunction(() => document.querySelector(".site-footer").classList.contains("footer-await"));
    await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
    await page.waitForFunction(() => document.querySelector(".site-footer").classList.contains("footer-in"));
    const played = () =>
      page.evaluate(() => document.getAnimations().filter((a) => a.animationName === "footer-in").map((a) => a.playState));
    await page.waitForFunction(() => document.getAnimations().every((a) => a.animationName !== "footer-in" || a.playState === "finished"));
    assert.deepEqual(await played(), ["finished"]);
    // Up and down again: nothing plays a second time, nothing reverses.
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.waitForTimeout(300);
    await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
    await page.waitForTimeout(300);
    assert.deepEqual(await played(), ["finished"]);
    assert.equal(await footer.getAttribute("class"), "site-footer footer-in");
    assert.equal(await page.locator(".footer-grid").evaluate((el) => getComputedStyle(el).opacity), "1");
    await app.screenshot(page, `noticed-footer-${width}`);

    // Reduced motion: it simply stands there.
    const calm = await app.newPage({ width, reducedMotion: "reduce" });
    await calm.goto(`${app.url}/about`);
    assert.equal(await calm.locator(".site-footer").getAttribute("class"), "site-footer");
    await calm.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
    assert.equal(await calm.locator(".footer-grid").evaluate((el) => getComputedStyle(el).opacity), "1");
  });
}

test("the mobile menu: a backdrop, Sign Up once, a tap outside closes it (390 px)", async () => {
  const page = await app.newPage({ width: 390 });
  await page.goto(`${app.url}/blog`);
  await page.locator(".menu-toggle").click();
  await page.locator("#mobile-menu:not([hidden])").waitFor();
  const backdrop = page.locator(".mobile-menu-backdrop");
  assert.ok(await backdrop.isVisible(), "the page behind is dimmed");
  const signUps = await page.getByRole("link", { name: "Sign Up" }).evaluateAll((els) => els.filter((e) => e.checkVisibility()).length);
  assert.equal(signUps, 1);
  assert.ok(await page.locator("#mobile-menu").getByRole("link", { name: "Login" }).isVisible());
  await app.screenshot(page, "noticed-menu-390");
  await page.mouse.click(195, 800);
  await page.locator("#mobile-menu").waitFor({ state: "hidden" });
  assert.equal(await backdrop.isVisible(), false);
  app.assertNoConsoleErrors(page, { allow: [/status of 401 .*\/api\/user/] });
});

test("no analytics tag: no third-party request at all; with one, the tag with its parameters and the page's path", async () => {
  const visitor = await app.newPage({ width: 1280 });
  const elsewhere = [];
  visitor.on("request", (r) => {
    if (!r.url().startsWith(app.url) && !/^(data|blob):/.test(r.url())) elsewhere.push(r.url());
  });
  for (const path of ["/", "/blog", "/about"]) {
    await visitor.goto(`${app.url}${path}`);
    await visitor.waitForLoadState("networkidle");
  }
  assert.deepEqual(elsewhere, []);
  assert.equal(await visitor.evaluate(() => typeof window.dataLayer), "undefined");

  // The admin chooses GA4 in the studio, its script host a local stand-in for Google's.
  const gtag = await fakeServer((_req, _body, res) => {
    res.writeHead(200, { "content-type": "text/javascript" });
    res.end("window.__gtagLoaded = (window.__gtagLoaded || 0) + 1;");
  });
  try {
    await app.cli(["user", "create", "--username", "tagadmin", "--email", "tagadmin@example.test", "--admin"], "secret-pass\n");
    const admin = await app.newPage({ width: 1280 });
    await admin.goto(`${app.url}/admin`);
    await admin.evaluate(() =>
      fetch("/api/login", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ username: "tagadmin", password: "secret-pass" }) }),
    );
    await admin.goto(`${app.url}/admin/dashboard`);
    await admin.getByLabel("Provider").selectOption("ga4");
    await admin.getByLabel("Measurement or site id").fill("G-TEST123");
    await admin.getByLabel("Script host").fill(gtag.url);
    await admin.getByRole("button", { name: "Save Settings" }).click();
    await admin.getByTestId("analytics-tag-status").waitFor();
    assert.match(await admin.getByTestId("analytics-tag-status").innerText(), /Google Analytics 4 is loaded on every page/);
    await app.screenshot(admin, "noticed-studio-analytics-1280");

    for (const width of [390, 1280]) {
      const page = await app.newPage({ width });
      await page.goto(`${app.url}/blog?search=someone%40example.com`);
      await page.waitForFunction(() => window.__gtagLoaded === 1, null, { timeout: 15_000 });
      const loaded = gtag.requests.at(-1);
      assert.equal(loaded.url, "/gtag/js?id=G-TEST123");
      const layer = await page.evaluate(() => window.dataLayer.map((a) => Array.from(a)));
      assert.deepEqual(layer[0], [
        "consent",
        "default",
        { ad_storage: "denied", ad_user_data: "denied", ad_personalization: "denied", analytics_storage: "denied" },
      ]);
      const config = layer.find((c) => c[0] === "config");
      assert.equal(config[1], "G-TEST123");
      assert.equal(config[2].anonymize_ip, true);
      assert.equal(config[2].allow_ad_personalization_signals, false);
      assert.equal(config[2].allow_google_signals, false);
      assert.equal(config[2].send_page_view, false);
      const view = layer.find((c) => c[0] === "event" && c[1] === "page_view");
      assert.equal(view[2].page_path, "/blog");
      assert.ok(!JSON.stringify(layer).includes("someone"), "the query stays on the page");
      await page.waitForFunction(() => window.dataLayer.some((a) => a[0] === "event" && a[1] === "timing_complete"));
      const csp = (await page.goto(`${app.url}/terms-of-service`)).headers()["content-security-policy"];
      assert.match(csp, new RegExp(`connect-src 'self' ${gtag.url.replace(/[.:/]/g, "\\$&")} `));
      assert.match(await page.getByTestId("analytics-tag-privacy").innerText(), /^We also use Google Analytics 4/);
      app.assertNoConsoleErrors(page, { allow: [/status of 401 .*\/api\/user/] });
    }
  } finally {
    await gtag.close();
  }
});
