// /docs/api: the introduction is server HTML, the reference viewer (RapiDoc, bundled) renders
// the OpenAPI document under the strict CSP, on a phone and a desktop; the home page does
// not load the viewer.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { startApp } from "./harness.mjs";

let app;
before(async () => {
  app = await startApp({ env: { REELFIND_LIBRARY_DEMO: "false" } });
});
after(async () => {
  await app?.stop();
});

describe("API documentation page", () => {
  test("renders the introduction and the reference at 1280px and 390px", async () => {
    for (const width of [1280, 390]) {
      const page = await app.newPage({ width });
      const res = await page.goto(`${app.url}/docs/api`);
      assert.equal(res.status(), 200);
      assert.match(res.headers()["content-security-policy"], /script-src 'nonce-/);
      assert.equal((await page.locator("h1").textContent()).trim(), "The Reelfind API");
      const examples = await page.locator(".prose pre").allTextContents();
      assert.ok(examples.some((e) => e.includes("Authorization: Bearer $REELFIND_API_KEY") && e.includes("/api/identify")));
      assert.ok(examples.some((e) => e.includes("fetch(")));
      assert.ok(examples.some((e) => e.includes("import requests")));
      // Error codes come from the server's list.
      assert.ok((await page.locator("#errors ~ .table-wrap td code").allTextContents()).includes("rate_limited"));
      // The viewer: a custom element whose shadow tree lists the operations.
      await page.waitForFunction(
        () => {
          const root = document.querySelector("rapi-doc")?.shadowRoot;
          return !!root && root.textContent.includes("/api/identify") && root.textContent.includes("/api/history");
        },
        null,
        { timeout: 30_000 },
      );
      await page.locator("#reference").scrollIntoViewIfNeeded();
      await app.screenshot(page, `api-docs-${width}`);
      await page.locator("rapi-doc").scrollIntoViewIfNeeded();
      await app.screenshot(page, `api-docs-reference-${width}`);
      // The page's own content meets WCAG AA; the third-party viewer's shadow tree is left
      // out of this check (its colours are set from our palette in islands/src/apiref).
      await app.assertAccessible(page, { include: { include: [["main"]], exclude: [["rapi-doc"]] } });
      // RapiDoc probes `new Function("return this")` once and falls back when CSP refuses.
      app.assertNoConsoleErrors(page, { allow: [/unsafe-eval/] });
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 1, `the page scrolls sideways by ${overflow}px at ${width}px`);
    }
  });

  test("the footer links to it and the home page does not load the viewer", async () => {
    const page = await app.newPage({ width: 1280 });
    const scripts = [];
    page.on("request", (req) => req.resourceType() === "script" && scripts.push(req.url()));
    await page.goto(`${app.url}/`, { waitUntil: "networkidle" });
    assert.equal(await page.locator("footer a[href='/docs/api']").count(), 1);
    assert.ok(!scripts.some((s) => s.includes("apiref")), scripts.join("\n"));
  });
});
