// The admin's Insight tab in the browser: a few identifications (the Library engine and the
// bundled demo clip, no cloud key) and page views, then the charts at 390 and 1280 px,
// axe-clean; and PREFETCH_ADMIN: signing in as an admin makes the service worker cache the
// admin pages' code.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { repoRoot, startApp } from "./harness.mjs";

let app;
let dir;

before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "reelfind-insight-e2e-"));
  app = await startApp({ env: { REELFIND_LIBRARY_DEMO: "true" } });
  const deadline = Date.now() + 120_000;
  for (;;) {
    const models = await (await fetch(`${app.url}/api/models`)).json();
    if (models.available?.library === true) break;
    if (Date.now() > deadline) throw new Error(`the demo clip was not indexed in time:\n${app.serverLog()}`);
    await new Promise((r) => setTimeout(r, 500));
  }
  await app.cli(["user", "create", "--username", "chief", "--email", "chief@example.com", "--admin"], "admin-pass\n");
});

after(async () => {
  await app?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** A JPEG: a frame of the demo clip at `at` seconds, or a flat colour no library matches. */
function still(name, at) {
  const out = path.join(dir, name);
  const clip = path.join(repoRoot, "assets/demo/big-buck-bunny.mp4");
  const input = at === null ? ["-f", "lavfi", "-i", "testsrc2=size=640x360:rate=1"] : ["-ss", String(at), "-i", clip];
  execFileSync("ffmpeg", ["-nostdin", "-v", "error", "-y", ...input, "-frames:v", "1", "-q:v", "3", out]);
  return out;
}

async function identifyIn(page, file) {
  const bytes = (await readFile(file)).toString("base64");
  return page.evaluate(async (b64) => {
    const bin = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const form = new FormData();
    form.append("file", new Blob([bin], { type: "image/jpeg" }), "shot.jpg");
    form.append("mode", "library");
    form.append("useAudioAnalysis", "false");
    form.append("useEnhancedAnalysis", "true");
    const r = await fetch("/api/identify", { method: "POST", body: form, credentials: "include" });
    return r.status;
  }, bytes);
}

async function signInAsAdmin(page) {
  await page.goto(`${app.url}/admin`);
  await page.fill("#admin-username", "chief");
  await page.fill("#admin-password", "admin-pass");
  await Promise.all([page.waitForURL(`${app.url}/admin/dashboard`), page.click("button[type=submit]")]);
}

test("signing in as an admin warms the admin pages in the service worker (PREFETCH_ADMIN)", async () => {
  const page = await app.newPage({ width: 1280 });
  await page.addInitScript(() => {
    window.addEventListener("reelfind:cache_updated", (e) => (window.__cacheUpdates ??= []).push(e.detail));
  });
  await signInAsAdmin(page);
  await page.waitForFunction(() => (window.__cacheUpdates ?? []).some((u) => u.cache.startsWith("reelfind-static-")), null, {
    timeout: 30_000,
  });
  const warm = await page.evaluate(async () => {
    const prelude = (await (await fetch("/sw.js")).text()).split("\n")[0];
    const build = JSON.parse(prelude.replace(/^self\.__REELFIND_SW__ = /, "").replace(/;$/, ""));
    const cache = await caches.open(`reelfind-static-${build.version}`);
    const missing = [];
    for (const u of build.admin) if (!(await cache.match(u))) missing.push(u);
    return { admin: build.admin, missing, sent: sessionStorage.getItem("reelfind.adminPrefetched") };
  });
  assert.ok(warm.admin.some((u) => /\/Insight-[A-Z0-9]+\.js$/.test(u)), `the Insight island is in the admin list: ${warm.admin}`);
  assert.deepEqual(warm.missing, [], "every admin chunk is cached");
  assert.ok(warm.sent, "sent once for this sign-in");
  app.assertNoConsoleErrors(page);
  await page.context().close();
});

test("the Insight tab charts identifications and page views", async () => {
  // A visitor reads a few pages (the runtime reports each page view at idle time).
  const visitor = await app.newPage({ width: 390 });
  for (const p of ["/", "/about", "/blog", "/about"]) {
    await visitor.goto(`${app.url}${p}`);
    await visitor.waitForLoadState("networkidle");
  }
  await visitor.context().close();

  const page = await app.newPage({ width: 1280 });
  await signInAsAdmin(page);
  // Three frames of the demo clip (found) and one picture it does not contain (not found).
  const statuses = [];
  for (const [name, at] of [["a.jpg", 1.0], ["b.jpg", 2.6], ["c.jpg", 4.2], ["none.jpg", null]]) {
    statuses.push(await identifyIn(page, still(name, at)));
  }
  assert.deepEqual(statuses, [200, 200, 200, 404]);

  for (const width of [1280, 390]) {
    const view = width === 1280 ? page : await (async () => {
      const p = await app.newPage({ width });
      await signInAsAdmin(p);
      return p;
    })();
    await view.goto(`${app.url}/admin/insight?days=7`);
    await view.locator('[data-island="Insight"][data-island-state="mounted"]').waitFor({ timeout: 30_000 });
    assert.equal(await view.locator(".admin-tabs [aria-current=page]").textContent(), "Insight");
    const total = (label) =>
      view.locator(".insight-totals div").filter({ has: view.locator("dt", { hasText: new RegExp(`^${label}$`) }) }).locator("dd").textContent();
    assert.equal(await total("Identified"), "3");
    assert.equal(await total("Not identified"), "1");
    assert.ok(Number(await total("Page views")) >= 4, "the visitor's page views are counted");
    for (const chart of ["page-views", "identifications", "engine-success", "engine-latency", "top-titles", "top-pages"]) {
      const canvas = view.locator(`[data-chart="${chart}"] canvas`);
      await canvas.waitFor();
      assert.ok((await canvas.getAttribute("aria-label")).length > 10, `${chart} says what it shows`);
      // Chart.js has drawn something: the canvas is not blank.
      const drawn = await canvas.evaluate((c) => {
        const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
        for (let i = 3; i < d.length; i += 4) if (d[i] !== 0) return true;
        return false;
      });
      assert.ok(drawn, `${chart} is drawn`);
    }
    await app.screenshot(view, `insight-${width}`);
    await view.locator('[data-chart="engine-success"]').scrollIntoViewIfNeeded();
    await app.screenshot(view, `insight-${width}-engines`);
    await view.screenshot({ path: path.join(path.dirname(new URL(import.meta.url).pathname), "artifacts", `insight-${width}-full.png`), fullPage: true });
    const engines = view.locator('[data-chart="engine-success"] table');
    assert.match(await engines.locator("tbody tr").first().textContent(), /Library\s*4\s*3\s*1\s*0\s*75%/);
    assert.match(await view.locator('[data-chart="top-titles"] tbody').textContent(), /Big Buck Bunny.*3/);
    assert.match(await view.locator(".insight-conversion").textContent(), /Guests who identified a scene\s*0/);
    await view.locator('[data-chart="top-pages"] summary').click();
    assert.match(await view.locator('[data-chart="top-pages"] tbody').textContent(), /\/about\s*2/);
    await app.assertAccessible(view);
    // The picture that matches nothing answers 404 (no match), which the browser logs.
    app.assertNoConsoleErrors(view, { allow: [/404.*\/api\/identify/] });
  }
});
