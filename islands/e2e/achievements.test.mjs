// Achievements as a person meets them: an identification earns "First Scene", a toast says
// so once, and the profile lists it with its date (at 390 and 1280 px).
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { startApp } from "./harness.mjs";
import { fakeServer, json, makePng } from "./identify-fixtures.mjs";

let app;
let openai;
let files;

const chat = (content) => ({
  id: "chatcmpl-e2e",
  object: "chat.completion",
  created: 1790000000,
  model: "gpt-4.1-mini",
  choices: [{ index: 0, finish_reason: "stop", logprobs: null, message: { role: "assistant", refusal: null, annotations: [], content: JSON.stringify(content) } }],
  usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
});
const answer = { candidates: [{ media_type: "movie", title: "Heat", year: 1995, season: null, episode: null, confidence: 0.9, imdb_id: null, evidence: ["a diner"], fun_facts: [] }] };

before(async () => {
  openai = await fakeServer((req, _body, res) => (req.url === "/v1/chat/completions" ? json(res, 200, chat(answer)) : json(res, 404, {})));
  files = await mkdtemp(path.join(os.tmpdir(), "reelfind-achievements-e2e-"));
  app = await startApp({ env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: `${openai.url}/v1`, REELFIND_LIBRARY_DEMO: "false", REELFIND_IDENTIFY_PER_MINUTE: "100" } });
});
after(async () => {
  await app?.stop();
  await openai?.close();
  if (files) await rm(files, { recursive: true, force: true });
});


test("an identification earns First Scene: one toast, then the profile shows it with its date", async () => {
  for (const [i, width] of [390, 1280].entries()) {
    const page = await app.newPage({ width });
    await app.signInNew(page, `fan${i}`);
    await page.goto(`${app.url}/`);
    const file = path.join(files, `${width}.png`);
    await writeFile(file, makePng(480, 270, 30 + i));
    await page.locator(".id-file-input").setInputFiles(file);
    await page.locator(".id-preview-img").waitFor();
    await page.getByRole("button", { name: "Identify Now" }).click();
    await page.getByTestId("result-view").waitFor({ timeout: 30_000 });
    const toast = page.locator(".toast", { hasText: "Achievement unlocked: First Scene" });
    await toast.waitFor({ timeout: 10_000 });
    assert.match(await toast.textContent(), /Identified your first screenshot or clip/);
    await app.screenshot(page, `achievement-toast-${width}`);

    await page.goto(`${app.url}/profile`);
    await page.getByTestId("profile").waitFor();
    const stats = page.locator(".profile-stats div", { hasText: "Achievements" }).locator("dd");
    assert.equal(await stats.textContent(), "1");
    await page.getByRole("tab", { name: "Achievements" }).click();
    const earned = page.getByTestId("achievements-earned").locator(".achievement");
    assert.equal(await earned.count(), 1);
    assert.equal(await earned.locator(".achievement-title").textContent(), "First Scene");
    const when = await earned.locator("time").getAttribute("datetime");
    assert.ok(Date.now() - Date.parse(when) < 5 * 60_000, `earned just now: ${when}`);
    assert.match(await earned.textContent(), /Earned \w+ \d+, \d{4}/);
    const locked = await page.getByTestId("achievements-locked").locator(".achievement-title").allTextContents();
    assert.deepEqual(locked, ["Film Buff", "All Ears", "Collector", "Critic", "Sharp Eye", "Week of Scenes"]);
    // Announced once: opening the profile did not toast it again.
    await page.waitForTimeout(500);
    assert.equal(await page.locator(".toast", { hasText: "Achievement unlocked" }).count(), 0);
    await app.screenshot(page, `achievements-tab-${width}`);
    await app.assertAccessible(page, { include: "main" });
    app.assertNoConsoleErrors(page);
  }
});
