// "Was this right?" and the answer memory in a real browser against the real binary, with
// local fakes of OpenAI (which always says The Matrix) and TMDB (search, details, the title
// search, posters): a signed-in person answers No, searches the right title, picks it with
// the keyboard, sees their result and their history show it; another person's copy of an
// identified scene (a different encode of the same frame) is answered from memory and says
// so. At 1280 and 390 px; screenshots in e2e/artifacts/, axe-core checks the panel.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { repoRoot, startApp } from "./harness.mjs";
import { engineFakesEnv, ensureMarks, fakeServer, json, makePng } from "./identify-fixtures.mjs";

let app;
let openai;
let tmdb;
let files;

const chatCompletion = (title, year) => ({
  id: "chatcmpl-e2e",
  object: "chat.completion",
  created: 1790000000,
  model: "gpt-4.1-mini-2025-04-14",
  choices: [
    {
      index: 0,
      finish_reason: "stop",
      logprobs: null,
      message: {
        role: "assistant",
        refusal: null,
        annotations: [],
        content: JSON.stringify({
          candidates: [{ media_type: "movie", title, year, season: null, episode: null, confidence: 0.9, imdb_id: null, evidence: ["a forest"], fun_facts: [] }],
        }),
      },
    },
  ],
  usage: { prompt_tokens: 1105, completion_tokens: 48, total_tokens: 1153 },
});

const details = (id, title, date, poster) => ({
  id,
  title,
  original_title: title,
  overview: `${title}: the catalog's plot summary.`,
  release_date: date,
  runtime: 120,
  genres: [{ id: 18, name: "Drama" }],
  poster_path: poster,
  vote_average: 7.5,
  credits: { cast: [{ id: id * 10, name: `${title} Lead`, character: "Hero", order: 0, profile_path: null }], crew: [] },
  videos: { results: [] },
  "watch/providers": { results: {} },
  recommendations: { results: [] },
  external_ids: {},
  release_dates: { results: [] },
});

const posterPng = makePng(92, 138, 60);

before(async () => {
  openai = await fakeServer((req, _body, res) => {
    if (req.method === "POST" && req.url === "/v1/chat/completions") return json(res, 200, chatCompletion("The Matrix", 1999));
    return json(res, 404, { error: { message: `no route ${req.url}` } });
  });
  tmdb = await fakeServer((req, _body, res) => {
    const url = new URL(req.url, "http://x");
    if (url.pathname.startsWith("/t/p/")) {
      res.writeHead(200, { "content-type": "image/png" });
      return res.end(posterPng);
    }
    if (url.pathname === "/3/search/movie") {
      return json(res, 200, { page: 1, total_pages: 1, total_results: 1, results: [{ id: 603, title: "The Matrix", release_date: "1999-03-31", popularity: 80, poster_path: "/matrix.png" }] });
    }
    if (url.pathname === "/3/search/multi") {
      const q = (url.searchParams.get("query") ?? "").toLowerCase();
      const all = [
        { media_type: "movie", id: 10378, title: "Big Buck Bunny", release_date: "2008-05-30", poster_path: "/bunny.png", popularity: 20 },
        { media_type: "tv", id: 4242, name: "Bunny Tales", first_air_date: "2015-02-01", poster_path: null, popularity: 2 },
        { media_type: "person", id: 7, name: "Bunny Person" },
      ];
      return json(res, 200, { page: 1, total_pages: 1, total_results: 3, results: q.includes("bun") ? all : [] });
    }
    if (url.pathname === "/3/movie/603") return json(res, 200, details(603, "The Matrix", "1999-03-31", "/matrix.png"));
    if (url.pathname === "/3/movie/10378") return json(res, 200, details(10378, "Big Buck Bunny", "2008-05-30", "/bunny.png"));
    return json(res, 404, { status_code: 34, status_message: "The resource you requested could not be found." });
  });
  files = await mkdtemp(path.join(os.tmpdir(), "reelfind-feedback-e2e-"));
  app = await startApp({ env: engineFakesEnv(openai, tmdb) });
});

after(async () => {
  await app?.stop();
  await openai?.close();
  await tmdb?.close();
  if (files) await rm(files, { recursive: true, force: true });
});

/** A frame of the bundled demo clip as a JPEG of `quality` (2 best .. 31 worst), its own bytes. */
function demoFrame(name, at, quality) {
  const out = path.join(files, name);
  execFileSync("ffmpeg", ["-nostdin", "-v", "error", "-y", "-ss", String(at), "-i", path.join(repoRoot, "assets/demo/big-buck-bunny.mp4"), "-frames:v", "1", "-q:v", String(quality), out]);
  return out;
}

async function newPage(width) {
  const page = await app.newPage({ width });
  await page.route(`${tmdb.url}/t/p/**`, (route) => route.fulfill({ status: 200, contentType: "image/png", body: posterPng }));
  await ensureMarks(page, app.url);
  return page;
}


/** Identifies `file` in `auto` (the uploader preselects the recommended engine, and an engine
 * chosen by name is always asked: the memory answers in auto). */
async function identify(page, file) {
  await page.goto(`${app.url}/`);
  await page.locator('[data-island="Uploader"] .id-file-input').waitFor();
  await page.locator(".id-file-input").setInputFiles(file);
  await page.locator(".id-preview-img").waitFor();
  await page.getByRole("radio", { name: /^Auto/ }).check();
  await page.getByRole("button", { name: "Identify Now" }).click();
  const result = page.getByTestId("result-view");
  await result.waitFor({ timeout: 60_000 });
  return result;
}

const allowed = [/status of 401 .*\/api\/user/];

test("another person's copy of an identified scene is answered from memory and says so", async () => {
  const first = await newPage(1280);
  await app.signInNew(first, "first");
  await identify(first, demoFrame("scene-a.jpg", 2.6, 2));
  const calls = openai.requests.length;
  await first.context().close();
  for (const [i, width] of [1280, 390].entries()) {
    const page = await newPage(width);
    await app.signInNew(page, `second${i}`);
    const result = await identify(page, demoFrame(`scene-b${i}.jpg`, 2.6, 8 + i * 4));
    await result.getByTestId("from-memory").waitFor();
    assert.match(await result.getByTestId("from-memory").textContent(), /Recognised from earlier identifications/);
    await result.getByTestId("from-memory").scrollIntoViewIfNeeded();
    await app.screenshot(page, `feedback-from-memory-${width}`);
    // Yes confirms.
    await result.getByTestId("answer-feedback").getByRole("button", { name: "Yes" }).click();
    await result.getByText("Thanks for confirming.").waitFor();
    app.assertNoConsoleErrors(page, { allow: allowed });
    await page.context().close();
  }
  assert.equal(openai.requests.length, calls, "no engine was asked for the copies");
});

test("No, a title search, a pick: the result and the history show the picked title", async () => {
  for (const [i, width] of [1280, 390].entries()) {
    const page = await newPage(width);
    await app.signInNew(page, `picker${i}`);
    const result = await identify(page, demoFrame(`pick-${i}.jpg`, 1.2 + i, 3));
    await result.getByRole("heading", { name: "The Matrix", level: 2 }).waitFor();
    const panel = result.getByTestId("answer-feedback");
    await panel.getByRole("heading", { name: "Was this right?" }).waitFor();
    await panel.scrollIntoViewIfNeeded();
    await app.screenshot(page, `feedback-ask-${width}`);
    await app.assertAccessible(page, { include: '[data-testid="answer-feedback"]' });

    await panel.getByRole("button", { name: "No" }).click();
    const box = panel.getByRole("combobox", { name: "Which title is it?" });
    assert.equal(await box.evaluate((el) => el === document.activeElement), true, "the search has focus");
    await box.fill("bunny");
    const options = panel.getByRole("option");
    await options.first().waitFor();
    assert.equal(await options.count(), 2, "movies and shows, no people");
    assert.match(await options.nth(0).textContent(), /Big Buck Bunny.*2008.*Movie/);
    assert.match(await options.nth(1).textContent(), /Bunny Tales.*2015.*TV show/);
    await app.screenshot(page, `feedback-search-${width}`);
    await app.assertAccessible(page, { include: '[data-testid="answer-feedback"]' });
    // The keyboard picks: down to the second and back up to the first, Enter.
    await box.press("ArrowDown");
    assert.equal(await options.nth(1).getAttribute("aria-selected"), "true");
    await box.press("ArrowUp");
    assert.equal(await options.nth(0).getAttribute("aria-selected"), "true");
    await box.press("Enter");

    await panel.locator(".fb-done, .fb-error").first().waitFor();
    assert.equal(await panel.locator(".fb-error").count(), 0, `${await panel.locator(".fb-error").textContent().catch(() => "")}\n${app.serverLog().slice(-3000)}`);
    await panel.getByText("Thanks. Your result now shows Big Buck Bunny (2008).").waitFor();
    await result.getByRole("heading", { name: "Big Buck Bunny", level: 2 }).waitFor();
    await result.getByText("You corrected this from The Matrix.").waitFor();
    await app.screenshot(page, `feedback-corrected-${width}`);

    await page.goto(`${app.url}/history`);
    const card = page.locator(".id-history-card", { hasText: "Big Buck Bunny" });
    await card.waitFor();
    assert.equal(await page.locator(".id-history-card", { hasText: "The Matrix" }).count(), 0);
    await card.getByRole("button").click();
    const modal = page.getByRole("dialog");
    await modal.getByText("You corrected this from The Matrix.").waitFor();
    await modal.getByText("You said this was wrong.").waitFor();
    await app.screenshot(page, `feedback-history-${width}`);
    app.assertNoConsoleErrors(page, { allow: allowed });
    await page.context().close();
  }
});

test("the admin sees the disputed answer in Corrections, accepts it, and Insight charts the memory", async () => {
  // A remembered answer, said wrong by someone who picked another title (the first test's
  // pickers did; their answers were remembered as The Matrix).
  await app.cli(["user", "create", "--username", "chief", "--email", "chief@example.test", "--admin"], "admin-pass\n");
  for (const width of [1280, 390]) {
    const page = await newPage(width);
    await page.goto(`${app.url}/admin`);
    await page.fill("#admin-username", "chief");
    await page.fill("#admin-password", "admin-pass");
    await Promise.all([page.waitForURL(`${app.url}/admin/dashboard`), page.click("button[type=submit]")]);
    await page.goto(`${app.url}/admin/corrections`);
    await page.getByRole("heading", { name: "Corrections", level: 1 }).waitFor();
    const item = page.locator(".corrections-queue > li").first();
    await item.getByText("The Matrix").first().waitFor();
    await item.getByRole("row", { name: /Big Buck Bunny/ }).waitFor();
    await app.screenshot(page, `corrections-${width}`);
    await app.assertAccessible(page, { include: "main" });
    await page.goto(`${app.url}/admin/insight?days=7`);
    await page.locator('[data-chart="memory-answers"]').waitFor();
    await page.locator('[data-chart="engine-feedback"] canvas').waitFor();
    await page.locator('[data-chart="memory-savings"]').scrollIntoViewIfNeeded();
    await app.screenshot(page, `insight-memory-${width}`);
    app.assertNoConsoleErrors(page, { allow: allowed });
    await page.context().close();
  }
});
