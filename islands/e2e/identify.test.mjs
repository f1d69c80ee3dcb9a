// The identification experience in a real browser against the real binary, with local
// fakes of OpenAI (Chat Completions with the structured answer) and TMDB (search,
// details, images): a guest identifies a screenshot and reads the result tabs, the second
// try asks for an account, a signed-in user finds the result in history, filters it,
// opens it and clears history, a shared link opens the result, a corrupt file shows the
// File Format Issue view. Screenshots at 390px and 1280px go to e2e/artifacts/; axe-core
// checks each screen's content against WCAG 2.1 A/AA (names, labels, contrast, ARIA).
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { startApp } from "./harness.mjs";
import { engineFakesEnv, ensureMarks as ensureMarksAt, fakeServer, json, makeNoisePng, makePng } from "./identify-fixtures.mjs";

let app;
let openai;
let tmdb;
let files;

const answer = (title, year) => ({
  candidates: [
    {
      media_type: "movie",
      title,
      year,
      season: null,
      episode: null,
      confidence: 0.91,
      imdb_id: null,
      evidence: ["green-tinted city at night"],
      fun_facts: ["The bullet-time rig used 120 still cameras."],
    },
  ],
});

const chatCompletion = (content) => ({
  id: "chatcmpl-e2e",
  object: "chat.completion",
  created: 1790000000,
  model: "gpt-4.1-mini-2025-04-14",
  choices: [
    {
      index: 0,
      finish_reason: "stop",
      logprobs: null,
      message: { role: "assistant", refusal: null, annotations: [], content: JSON.stringify(content) },
    },
  ],
  usage: { prompt_tokens: 1105, completion_tokens: 48, total_tokens: 1153 },
});

const matrixDetails = {
  id: 603,
  imdb_id: "tt0133093",
  title: "The Matrix",
  original_title: "The Matrix",
  overview: "Set in the 22nd century, The Matrix tells the story of a computer hacker who joins the insurgents.",
  tagline: "Welcome to the Real World.",
  release_date: "1999-03-31",
  runtime: 136,
  genres: [
    { id: 28, name: "Action" },
    { id: 878, name: "Science Fiction" },
  ],
  budget: 63000000,
  revenue: 463517383,
  poster_path: "/matrix.png",
  backdrop_path: "/matrix-backdrop.png",
  vote_average: 8.218,
  vote_count: 26000,
  spoken_languages: [{ english_name: "English", iso_639_1: "en", name: "English" }],
  production_countries: [{ iso_3166_1: "US", name: "United States of America" }],
  origin_country: ["US"],
  credits: {
    cast: [
      { id: 6384, name: "Keanu Reeves", character: "Neo", order: 0, profile_path: "/keanu.png" },
      { id: 2975, name: "Laurence Fishburne", character: "Morpheus", order: 1, profile_path: null },
      { id: 530, name: "Carrie-Anne Moss", character: "Trinity", order: 2, profile_path: "/missing.png" },
    ],
    crew: [
      { id: 9339, name: "Lilly Wachowski", job: "Director", department: "Directing" },
      { id: 9340, name: "Lana Wachowski", job: "Director", department: "Directing" },
    ],
  },
  videos: {
    results: [{ key: "vKQi3bBA1y8", site: "YouTube", type: "Trailer", official: true, name: "Official Trailer" }],
  },
  "watch/providers": {
    id: 603,
    results: {
      US: {
        link: "https://www.themoviedb.org/movie/603-the-matrix/watch?locale=US",
        flatrate: [{ provider_id: 8, provider_name: "Netflix", logo_path: "/netflix.png", display_priority: 1 }],
        rent: [{ provider_id: 10, provider_name: "Amazon Video", logo_path: "/amazon.png", display_priority: 13 }],
        buy: [{ provider_id: 2, provider_name: "Apple TV", logo_path: "/apple.png", display_priority: 4 }],
      },
    },
  },
  recommendations: {
    page: 1,
    results: [{ id: 604, title: "The Matrix Reloaded", release_date: "2003-05-15", poster_path: "/reloaded.png", media_type: "movie" }],
  },
  external_ids: { imdb_id: "tt0133093" },
  release_dates: { results: [{ iso_3166_1: "US", release_dates: [{ certification: "R", type: 3 }] }] },
};

const posterPng = makePng(200, 300, 40);

before(async () => {
  openai = await fakeServer((req, body, res) => {
    if (req.method === "POST" && req.url === "/v1/chat/completions") {
      assert.equal(req.headers.authorization, "Bearer test-openai-key");
      const sent = JSON.parse(body.toString("utf8"));
      // The picture travels as an image part of the user message.
      assert.ok(JSON.stringify(sent.messages).includes("data:image/jpeg;base64,"), "image part sent");
      return json(res, 200, chatCompletion(answer("The Matrix", 1999)));
    }
    return json(res, 404, { error: { message: `no route ${req.url}` } });
  });
  tmdb = await fakeServer((req, _body, res) => {
    const url = new URL(req.url, "http://x");
    if (url.pathname.startsWith("/t/p/")) {
      if (url.pathname.endsWith("/missing.png")) return json(res, 404, {});
      res.writeHead(200, { "content-type": "image/png", "cache-control": "max-age=60" });
      return res.end(posterPng);
    }
    assert.equal(url.searchParams.get("api_key"), "test-tmdb-key");
    if (url.pathname === "/3/search/movie") {
      return json(res, 200, {
        page: 1,
        total_pages: 1,
        total_results: 1,
        results: [{ id: 603, title: "The Matrix", original_title: "The Matrix", release_date: "1999-03-31", popularity: 80.5, poster_path: "/matrix.png" }],
      });
    }
    if (url.pathname === "/3/movie/603") return json(res, 200, matrixDetails);
    return json(res, 404, { status_code: 34, status_message: "The resource you requested could not be found." });
  });
  files = await mkdtemp(path.join(os.tmpdir(), "reelfind-identify-e2e-"));
  app = await startApp({ env: engineFakesEnv(openai, tmdb) });
});

after(async () => {
  await app?.stop();
  await openai?.close();
  await tmdb?.close();
  if (files) await rm(files, { recursive: true, force: true });
});

/** A new browser page whose TMDB image requests are answered by the fake (Chromium refuses
 * cross-port loopback image loads from a page, so they are served through the test's route). */
async function newPage(width) {
  const page = await app.newPage({ width });
  await page.route(`${tmdb.url}/t/p/**`, async (route) => {
    const url = route.request().url();
    if (url.endsWith("/missing.png")) return route.fulfill({ status: 404, body: "" });
    return route.fulfill({ status: 200, contentType: "image/png", body: posterPng });
  });
  return page;
}

/** A fresh screenshot file (a different picture each time, so the server's reuse cache does not answer). */
let seed = 0;
async function screenshotFile(name = "scene.png") {
  seed += 1;
  const file = path.join(files, `${seed}-${name}`);
  await writeFile(file, makePng(480, 270, seed * 13));
  return file;
}

// Browsers fail to reach YouTube here (no network): that is expected noise.
const allowed = [/youtube/i, /status of 401 .*\/api\/user/, /status of 404 .*missing\.png/];

const ensureMarks = (page) => ensureMarksAt(page, app.url);

async function openHome(page, query = "") {
  await ensureMarks(page);
  await page.goto(`${app.url}/${query}`);
  // The uploader's first view is server HTML and the island takes over when the visitor
  // picks a file or an engine; a shared result (`?id=`) mounts it at once.
  const ready = query.includes("id=") ? '[data-island="Uploader"][data-island-state="mounted"]' : '[data-island="Uploader"] .id-file-input';
  await page.locator(ready).waitFor();
}

async function identify(page, file) {
  await page.locator(".id-file-input").setInputFiles(file);
  await page.locator(".id-preview-img").waitFor();
  await page.getByRole("button", { name: "Identify Now" }).click();
}


describe("identification experience", () => {
  test("a guest identifies a screenshot, reads the tabs, and the second try asks for an account", async () => {
    for (const width of [1280, 390]) {
      const page = await newPage(width);
      await openHome(page);
      const uploader = page.locator('[data-island="Uploader"]');
      await uploader.getByRole("heading", { name: "Identify Any Movie or TV Show" }).waitFor();
      // The recommended engine is preselected once models and settings are in.
      await uploader.getByRole("radio", { name: /OpenAI/, checked: true }).waitFor();
      assert.equal(await uploader.getByRole("radio", { name: /Anthropic/ }).count(), 0, "unavailable engines are not offered");
      await uploader.getByText(/Not configured on this server: .*Anthropic Claude/).waitFor();
      await app.screenshot(page, `identify-uploader-${width}`);
      await app.assertAccessible(page, { include: "main" });

      await page.locator(".id-file-input").setInputFiles(await screenshotFile());
      await page.locator(".id-preview-img").waitFor();
      assert.equal(await page.getByRole("checkbox", { name: /Analyze audio/ }).count(), 0, "no audio option for an image");
      await app.screenshot(page, `identify-selected-${width}`);

      // Hold the answer back a moment so the processing screen can be seen.
      let release;
      const held = new Promise((r) => (release = r));
      await page.route(`${app.url}/api/identify`, async (route) => {
        await held;
        await route.continue();
      });
      await page.getByRole("button", { name: "Identify Now" }).click();
      await page.getByRole("heading", { name: "Identifying Your Scene" }).waitFor();
      await page.getByText("Expected time: 30-60s").waitFor();
      // The engine by its settings' display name and description, never its id.
      const engineLine = page.getByTestId("processing-engine");
      assert.equal(await engineLine.locator("strong").textContent(), "OpenAI GPT");
      assert.match(await engineLine.textContent(), /Careful visual reasoning/);
      await page.locator('.id-step[aria-current="step"]', { hasText: "Finding matches" }).waitFor({ timeout: 10_000 });
      assert.equal(await page.getByRole("button", { name: "Analyzing..." }).isDisabled(), true);
      await app.screenshot(page, `identify-processing-${width}`);
      await app.assertAccessible(page, { include: "main" });
      release();
      await page.unroute(`${app.url}/api/identify`);

      const result = page.getByTestId("result-view");
      await result.waitFor({ timeout: 30_000 });
      // The result announces itself: focus on its title (in view, not under the header or
      // the sticky result bar) and a status message.
      const heading = result.getByRole("heading", { level: 2, name: "The Matrix" });
      assert.equal(await heading.evaluate((el) => el === document.activeElement), true);
      const uncovered = (el) => {
        const r = el.getBoundingClientRect();
        return el.contains(document.elementFromPoint(r.left + 8, r.top + r.height / 2));
      };
      assert.equal(await heading.evaluate(uncovered), true, "the focused title can be seen");
      assert.equal(await page.getByTestId("identify-status").textContent(), "Successfully identified: The Matrix (1999)");
      for (const text of ["Successfully Identified", "1999", "2h 16m", "91% match", "Action", "Science Fiction", "Plot Summary", "Technical Information"]) {
        await result.getByText(text, { exact: true }).first().waitFor();
      }
      await result.getByText(/Dir\. (Lilly|Lana) Wachowski/).first().waitFor();
      const engineFact = result.locator(".id-fact", { has: page.locator("dt", { hasText: "Engine" }) }).locator("dd");
      assert.match(await engineFact.textContent(), /^OpenAI GPT \(gpt-/);
      assert.equal(await result.locator(".id-stars").getAttribute("data-full"), "4");
      const watch = result.getByRole("region", { name: "Where to Watch" });
      await watch.getByRole("heading", { name: "Stream with subscription" }).waitFor();
      await watch.getByRole("link", { name: /Netflix/ }).waitFor();
      assert.equal(await watch.getByRole("link", { name: "More streaming options" }).getAttribute("href"), "https://www.themoviedb.org/movie/603-the-matrix/watch?locale=US");
      await app.screenshot(page, `identify-result-${width}`);
      await app.assertAccessible(page, { include: "main" });

      const tabs = result.getByRole("tab");
      assert.deepEqual(await tabs.allTextContents(), ["Overview", "Cast", "Trailer", "More Details"]);
      await result.getByRole("tab", { name: "Overview" }).focus();
      await page.keyboard.press("ArrowRight");
      await result.getByText("Keanu Reeves").waitFor();
      await result.getByText("Morpheus").waitFor();
      await app.screenshot(page, `identify-tab-cast-${width}`);
      await page.keyboard.press("ArrowRight");
      const frame = result.locator("iframe");
      assert.match(await frame.getAttribute("src"), /^https:\/\/www\.youtube-nocookie\.com\/embed\/vKQi3bBA1y8/);
      await result.getByRole("link", { name: /Watch on YouTube/ }).waitFor();
      await page.keyboard.press("ArrowRight");
      await result.getByText("Fun Facts").waitFor();
      await result.getByText("The Matrix Reloaded").waitFor();
      await result.getByText("Box Office Performance").waitFor();
      await app.screenshot(page, `identify-tab-details-${width}`);
      await app.assertAccessible(page, { include: "main" });

      assert.equal(await page.evaluate(() => localStorage.getItem("freeUsageCount")), "1");

      // A guest cannot keep a collection: the server's 401 becomes "Sign in Required".
      const refused = page.waitForResponse((r) => r.url().endsWith("/api/collections/items"));
      await result.getByRole("button", { name: "Add to Collection" }).click();
      assert.equal((await refused).status(), 401);
      await page.getByText("Please sign in to add titles to your collection.").waitFor();

      // The second try: the browser's counter stops it before anything is sent.
      await result.getByRole("button", { name: /Identify Another/ }).click();
      await identify(page, await screenshotFile());
      const dialog = page.getByRole("dialog", { name: "Authentication Required" });
      await dialog.waitFor();
      await dialog.getByText(/First trial complete!/).waitFor();
      await app.screenshot(page, `identify-auth-modal-${width}`);
      await app.assertAccessible(page, { include: "main" });
      // Without the counter (cleared storage), the server's own limit answers 403 requiresAuth.
      await page.keyboard.press("Escape");
      await dialog.waitFor({ state: "hidden" });
      await page.evaluate(() => localStorage.removeItem("freeUsageCount"));
      const answered = page.waitForResponse((r) => r.url().endsWith("/api/identify"));
      await page.getByRole("button", { name: "Identify Now" }).click();
      assert.equal((await answered).status(), 403);
      await dialog.waitFor();
      await dialog.getByRole("link", { name: "Continue with Account" }).click();
      await page.waitForURL(`${app.url}/auth`);
      app.assertNoConsoleErrors(page, { allow: [...allowed, /status of 403/, /status of 401 .*\/api\/collections\/items/] });
      // /auth is a real page: the modal's link leads to the sign-in form.
      await page.getByRole("tab", { name: "Sign In" }).waitFor();
    }
  });

  test("a corrupt file shows the File Format Issue view", async () => {
    for (const width of [1280, 390]) {
      const page = await newPage(width);
      await openHome(page);
      const bad = path.join(files, `corrupt-${width}.png`);
      // A PNG signature followed by garbage: the name and type look right, the content is not a picture.
      await writeFile(bad, Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(4000, 7)]));
      await page.locator(".id-file-input").setInputFiles(bad);
      await page.getByRole("button", { name: "Identify Now" }).click();
      const view = page.getByTestId("error-view");
      await view.waitFor({ timeout: 30_000 });
      await view.getByRole("heading", { name: "File Format Issue" }).waitFor();
      assert.match(await view.locator(".id-error-message").textContent(), /^Invalid file format\. Please upload an image/);
      await view.getByText("Technical details (for support)").click();
      await view.locator("pre", { hasText: /^422: / }).waitFor();
      await app.screenshot(page, `identify-error-${width}`);
      await app.assertAccessible(page, { include: "main" });
      await view.getByRole("button", { name: "Upload Different File" }).click();
      await page.getByText("Drag and drop a file here, or click to browse").waitFor();
      app.assertNoConsoleErrors(page, { allow: [...allowed, /status of 422/] });
    }
  });

  test("a signed-in user identifies, finds it in history, filters, opens it and clears history", async () => {
    const page = await newPage(1280);
    await app.signInNew(page, "historian");
    await openHome(page);
    await identify(page, await screenshotFile());
    await page.getByTestId("result-view").waitFor({ timeout: 30_000 });
    assert.equal(await page.evaluate(() => localStorage.getItem("freeUsageCount")), null, "signed-in use is not counted");
    const shareId = await page.evaluate(() => fetch("/api/history?page=1&limit=20").then((r) => r.json()).then((b) => b.items[0].id));

    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: width <= 480 ? 844 : 900 });
      await ensureMarks(page);
      await page.goto(`${app.url}/history`);
      const history = page.getByTestId("history");
      await history.waitFor();
      await history.getByRole("heading", { name: "Identification History" }).waitFor();
      await page.getByTestId("history-count").getByText("1 item").waitFor();
      const card = history.getByRole("button", { name: /^The Matrix\s*,\s*Movie 1999 rated 8\.2\s*,\s*91% match \w+ \d+\s*, open details$/ });
      await card.waitFor();
      await card.getByText("91% match").waitFor();
      await app.screenshot(page, `identify-history-${width}`);
      await app.assertAccessible(page, { include: "main" });

      await history.getByPlaceholder("Search by title...").fill("zzz");
      await history.getByText("No results found").waitFor();
      await history.getByText("Try adjusting your filters or search query").waitFor();
      // The search covers every page: it is asked of the server once typing pauses.
      const searched = page.waitForResponse((r) => /\/api\/history\?.*search=matr/.test(r.url()));
      await history.getByPlaceholder("Search by title...").fill("matr");
      assert.equal((await (await searched).json()).total, 1);
      await card.waitFor();
      const filtered = page.waitForResponse((r) => /\/api\/history\?.*type=tv/.test(r.url()));
      await history.getByLabel("Type").selectOption("tv");
      assert.equal((await (await filtered).json()).totalAll, 1);
      await history.getByText("No results found").waitFor();
      await history.getByLabel("Type").selectOption("movie");
      await history.getByLabel("Sort by").selectOption("rating");
      await card.click();
      const modal = page.getByRole("dialog", { name: "The Matrix" });
      await modal.waitFor();
      await modal.getByRole("tab", { name: "Overview" }).waitFor();
      await app.screenshot(page, `identify-history-modal-${width}`);
      await app.assertAccessible(page, { include: "main" });
      await page.keyboard.press("Escape");
      await modal.waitFor({ state: "hidden" });
      assert.equal(await card.evaluate((el) => el === document.activeElement), true, "focus returns to the card");
    }

    await page.getByRole("button", { name: "Clear History" }).click();
    const confirm = page.getByRole("dialog", { name: "Clear identification history?" });
    await confirm.getByText("This action cannot be undone. All your identification history will be permanently deleted.").waitFor();
    await confirm.getByRole("button", { name: "Clear History" }).click();
    await page.getByText("Your identification history has been cleared successfully.").waitFor();
    await page.getByText("No history yet").waitFor();
    await page.getByRole("link", { name: "Start Identifying" }).waitFor();
    await app.screenshot(page, "identify-history-empty-390");
    assert.equal(await page.getByRole("button", { name: "Clear History" }).count(), 0);
    app.assertNoConsoleErrors(page, { allow: allowed });

    // The result itself was deleted with the history: its shared link is gone.
    const gone = await newPage(1280);
    await openHome(gone, `?id=${encodeURIComponent(shareId)}`);
    await gone.getByTestId("error-view").locator(".id-error-message", { hasText: "This shared identification link is no longer available" }).waitFor();
  });

  test("a shared link opens the result", async () => {
    const owner = await newPage(1280);
    await app.signInNew(owner, "sharer");
    await openHome(owner);
    await identify(owner, await screenshotFile());
    await owner.getByTestId("result-view").waitFor({ timeout: 30_000 });
    // The review dialog: a review is required; closing it marks the identification as reviewed.
    await owner.getByRole("button", { name: "Share Experience" }).click();
    const review = owner.getByRole("dialog", { name: "Share Your Experience" });
    await review.waitFor();
    assert.equal(await review.getByRole("radio", { name: "5 stars" }).isChecked(), true, "rating defaults to 5");
    await review.getByRole("button", { name: "Submit Review" }).click();
    await review.getByRole("alert").getByText("Review required - Please write a review before submitting").waitFor();
    await app.screenshot(owner, "identify-review-1280");
    await review.getByRole("radio", { name: "4 stars" }).check({ force: true });
    await review.getByLabel("Your review").fill("Found the film from one blurry frame.");
    const posted = owner.waitForRequest((r) => r.url().endsWith("/api/testimonials") && r.method() === "POST");
    await review.getByRole("button", { name: "Submit Review" }).click();
    const sent = JSON.parse((await posted).postData());
    assert.equal(sent.rating, 4);
    assert.equal(sent.review, "Found the film from one blurry frame.");
    assert.equal(sent.movieTitle, "The Matrix");
    assert.ok(sent.identificationId);
    await owner.getByText("Thank you for your review!").waitFor();
    await review.waitFor({ state: "hidden" });
    const reviewedKeys = await owner.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith("testimonial-completed-")));
    assert.equal(reviewedKeys.length, 1);

    await owner.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: app.url });
    await owner.getByRole("button", { name: "Share", exact: true }).click();
    await owner.getByText("Shareable link has been copied to your clipboard.").waitFor();
    const link = await owner.evaluate(() => navigator.clipboard.readText());
    assert.match(link, new RegExp(`^${app.url}/shared/[\\w-]+$`));

    // Home lists it among the recent identifications (at most 3), linking to its catalog page
    // (someone else's identification is not theirs to open).
    const home = await newPage(1280);
    await openHome(home);
    const recent = home.locator('[data-island="RecentIdentifications"]');
    await recent.scrollIntoViewIfNeeded();
    const card = recent.getByRole("link", { name: /The Matrix/ }).first();
    await card.waitFor();
    assert.equal(await card.getAttribute("href"), "https://www.themoviedb.org/movie/603");
    assert.ok((await recent.getByRole("listitem").count()) <= 3);

    for (const width of [1280, 390]) {
      const visitor = await newPage(width);
      await ensureMarks(visitor);
      await visitor.goto(link);
      await visitor.getByRole("heading", { level: 1, name: "The Matrix (1999)" }).waitFor();
      await app.screenshot(visitor, `shared-page-${width}`);
      await app.assertAccessible(visitor, { include: "main" });
      await visitor.getByRole("link", { name: /See the full result/ }).click();
      await visitor.waitForURL((u) => u.pathname === "/");
      const result = visitor.getByTestId("result-view");
      await result.waitFor({ timeout: 15_000 });
      await result.getByRole("heading", { level: 2, name: "The Matrix" }).waitFor();
      await result.getByRole("button", { name: /New Search/ }).waitFor();
      assert.equal(new URL(visitor.url()).search, "", "the id parameter is removed from the address bar");
      await app.screenshot(visitor, `identify-shared-${width}`);
      app.assertNoConsoleErrors(visitor, { allow: allowed });
    }
  });

  test("a signed-in user saves the result to the collection and manages it on the profile", async () => {
    const page = await newPage(1280);
    await app.signInNew(page, "collector");
    await openHome(page);
    await identify(page, await screenshotFile());
    const result = page.getByTestId("result-view");
    await result.waitFor({ timeout: 30_000 });
    for (let i = 0; i < 2; i++) {
      const saved = page.waitForResponse((r) => r.url().endsWith("/api/collections/items") && r.request().method() === "POST");
      await result.getByRole("button", { name: i === 0 ? "Add to Collection" : "In Your Collection" }).click();
      // First a new item (201), then the same title again: the item already there (200).
      assert.equal((await saved).status(), i === 0 ? 201 : 200);
      await page.getByText("The Matrix was added to your collection.").first().waitFor();
    }

    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: width <= 480 ? 844 : 900 });
      await page.goto(`${app.url}/profile`);
      await page.locator('[data-island="Profile"][data-island-state="mounted"]').waitFor();
      await page.getByRole("tab", { name: "Collections" }).click();
      const items = page.getByTestId("collection-items");
      await items.waitFor();
      assert.equal(await items.getByRole("listitem").count(), 1, "saving twice keeps one item");
      const item = items.getByRole("listitem").first();
      await item.getByRole("heading", { name: "The Matrix" }).waitFor();
      await item.getByText("1999", { exact: true }).waitFor();
      const poster = item.getByRole("img", { name: "The Matrix poster" });
      await poster.waitFor();
      assert.equal(await poster.evaluate((img) => img.complete && img.naturalWidth > 0), true, "the poster loaded");
      await app.screenshot(page, `profile-collections-${width}`);
      await app.assertAccessible(page, { include: "main" });
    }

    await page.getByRole("button", { name: "Remove The Matrix from collection" }).click();
    await page.getByText("No collections yet").waitFor();
    await page.getByText("The Matrix was removed from your collection.").waitFor();
    await page.reload();
    await page.getByRole("tab", { name: "Collections" }).click();
    await page.getByText("No collections yet").waitFor();
    await app.screenshot(page, "profile-collections-empty-390");
    app.assertNoConsoleErrors(page, { allow: allowed });
  });

  test("a large upload shows its progress bar while the file goes up", async () => {
    const big = path.join(files, "large-scene.png");
    await writeFile(big, makeNoisePng(1600, 1200));
    for (const width of [1280, 390]) {
      const page = await newPage(width);
      await app.signInNew(page, `uploader${width}`);
      await openHome(page);
      await page.locator(".id-file-input").setInputFiles(big);
      await page.locator(".id-preview-img").waitFor();
      // Slow the browser's upload to 1.5 MB/s (DevTools network emulation), so the ~5.8 MB
      // body takes a few seconds, as it would on a real connection.
      const cdp = await page.context().newCDPSession(page);
      await cdp.send("Network.enable");
      await cdp.send("Network.emulateNetworkConditions", { offline: false, latency: 20, downloadThroughput: -1, uploadThroughput: 1.5 * 1024 * 1024 });
      await page.getByRole("button", { name: "Identify Now" }).click();
      const bar = page.getByRole("progressbar", { name: /^Uploading [\d.]+ MB of 5\.\d MB/ });
      await bar.waitFor({ timeout: 10_000 });
      const first = Number(await bar.getAttribute("value"));
      await page.waitForFunction((v) => Number(document.querySelector(".id-progress progress")?.getAttribute("value") ?? 101) > v, first, { timeout: 10_000 });
      await app.screenshot(page, `identify-progress-${width}`);
      // Once the body is up, the bar goes and the steps carry on to the result.
      await page.getByTestId("result-view").waitFor({ timeout: 60_000 });
      assert.equal(await page.locator(".id-progress").count(), 0);
      await cdp.send("Network.emulateNetworkConditions", { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
      app.assertNoConsoleErrors(page, { allow: allowed });
    }
  });
});
