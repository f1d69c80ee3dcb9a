// The Library engine in the browser: with no cloud key and no catalog key, the bundled demo
// clip is indexed at start, and a still from it is identified with its exact second and the
// matched frame as a preview.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { repoRoot, startApp } from "./harness.mjs";
import { ensureMarks } from "./identify-fixtures.mjs";

let app;
let dir;

before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "reelfind-library-e2e-"));
  app = await startApp({ env: { REELFIND_LIBRARY_DEMO: "true" } });
  // The demo clip is indexed in the background after start.
  const deadline = Date.now() + 120_000;
  for (;;) {
    const models = await (await fetch(`${app.url}/api/models`)).json();
    if (models.available?.library === true) break;
    if (Date.now() > deadline) throw new Error(`the demo clip was not indexed in time:\n${app.serverLog()}`);
    await new Promise((r) => setTimeout(r, 500));
  }
});

after(async () => {
  await app?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test("a still from an indexed video is found at its second, with the matched frame", async () => {
  const still = path.join(dir, "still.jpg");
  const clip = path.join(repoRoot, "assets/demo/big-buck-bunny.mp4");
  execFileSync("ffmpeg", ["-nostdin", "-v", "error", "-y", "-ss", "2.6", "-i", clip, "-frames:v", "1", "-q:v", "3", still]);
  assert.ok((await readFile(still)).length > 1000);

  for (const width of [1280, 390]) {
    const page = await app.newPage({ width });
    await ensureMarks(page, app.url);
    await page.goto(`${app.url}/`);
    const uploader = page.locator('[data-island="Uploader"]');
    await uploader.locator(".id-file-input").waitFor();
    const library = uploader.getByRole("radio", { name: /Library/ });
    await library.waitFor();
    await library.check();
    await uploader.locator(".id-file-input").setInputFiles(still);
    await uploader.getByRole("button", { name: "Identify Now" }).click();
    const result = page.getByTestId("result-view");
    await result.waitFor({ timeout: 60_000 });
    await result.getByRole("heading", { level: 2, name: "Big Buck Bunny" }).waitFor();
    const when = await result.locator(".id-timestamp").textContent();
    assert.match(when, /Found at 0:0[23]/);
    const preview = result.locator("img.id-preview");
    assert.match(await preview.getAttribute("src"), /^\/api\/library\/preview\//);
    await page.waitForFunction(() => {
      const img = document.querySelector("img.id-preview");
      return img instanceof HTMLImageElement && img.complete && img.naturalWidth > 0;
    });
    await app.screenshot(page, `identify-library-${width}`);
    app.assertNoConsoleErrors(page, { allow: [/status of 401 .*\/api\/user/] });
  }
});
