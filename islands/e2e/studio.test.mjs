// The admin studio in a real browser: review moderation (and, as it grows, the blog editor
// and search appearance). Screenshots at 390 and 1280 px land in e2e/artifacts/studio-*.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { startApp } from "./harness.mjs";

/** A real photo-like JPEG made by Chromium's canvas (gradients and text), 1600x900. */
async function makeJpeg(page) {
  const data = await page.evaluate(async () => {
    const c = document.createElement("canvas");
    c.width = 1600;
    c.height = 900;
    const g = c.getContext("2d");
    const grad = g.createLinearGradient(0, 0, 1600, 900);
    grad.addColorStop(0, "#1b2a49");
    grad.addColorStop(1, "#f5b83d");
    g.fillStyle = grad;
    g.fillRect(0, 0, 1600, 900);
    g.fillStyle = "#fff";
    g.font = "bold 120px sans-serif";
    g.fillText("Scene Hunting", 200, 480);
    const blob = await new Promise((r) => c.toBlob(r, "image/jpeg", 0.9));
    return Array.from(new Uint8Array(await blob.arrayBuffer()));
  });
  const file = path.join(os.tmpdir(), `studio-${process.pid}.jpg`);
  await writeFile(file, Buffer.from(data));
  return file;
}

let app;
before(async () => {
  app = await startApp();
});
after(async () => {
  await app?.stop();
});

/** Creates an account (an admin with `admin: true`) and signs `page` in as it. */
async function signIn(page, username, { admin = false } = {}) {
  const args = ["user", "create", "--username", username, "--email", `${username}@example.test`];
  if (admin) args.push("--admin");
  await app.cli(args, "secret-pass\n");
  await page.goto(`${app.url}/`);
  const status = await page.evaluate(async (u) => {
    const res = await fetch("/api/login", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: u, password: "secret-pass" }),
    });
    return res.status;
  }, username);
  assert.equal(status, 200);
}

/** POSTs JSON from inside the page (same origin, its cookies); the status and body. */
async function postJson(page, url, body) {
  return page.evaluate(
    async ([u, b]) => {
      const res = await fetch(u, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(b) });
      return { status: res.status, body: await res.json().catch(() => null) };
    },
    [url, body],
  );
}

test("a review waits for an admin, then the home page shows it", async () => {
  const writer = await app.newPage({ width: 1280 });
  await signIn(writer, "reviewer");
  const posted = await postJson(writer, "/api/testimonials", { rating: 4, review: "Found my film from a blurry frame in seconds." });
  assert.equal(posted.status, 201);
  assert.equal(posted.body.status, "pending");
  await postJson(writer, "/api/testimonials", { rating: 1, review: "Buy cheap watches at spam.example" });

  const visitor = await app.newPage({ width: 1280 });
  await visitor.goto(`${app.url}/`);
  assert.equal(await visitor.locator("#testimonials blockquote").count(), 0, "nothing public before moderation");

  for (const width of [1280, 390]) {
    const admin = await app.newPage({ width });
    if (width === 1280) await signIn(admin, "moderator", { admin: true });
    else {
      await admin.goto(`${app.url}/`);
      await admin.evaluate(async () =>
        fetch("/api/login", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ username: "moderator", password: "secret-pass" }) }),
      );
    }
    await admin.goto(`${app.url}/admin/testimonials`);
    await admin.getByRole("link", { name: /Pending/ }).waitFor();
    await app.screenshot(admin, `studio-reviews-${width}`);
    await app.assertAccessible(admin, { include: "main" });
    app.assertNoConsoleErrors(admin);
  }

  const admin = await app.newPage({ width: 1280 });
  await admin.goto(`${app.url}/`);
  await admin.evaluate(async () =>
    fetch("/api/login", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ username: "moderator", password: "secret-pass" }) }),
  );
  await admin.goto(`${app.url}/admin/testimonials`);
  await admin.getByRole("button", { name: "Approve the review by reviewer" }).first().click();
  await admin.getByText("Review approved: the home page shows it.").waitFor();
  await admin.getByRole("button", { name: "Hide the review by reviewer" }).first().click();
  await admin.getByText("Review hidden from the home page.").waitFor();

  await visitor.goto(`${app.url}/`);
  const shown = await visitor.locator("#testimonials blockquote").allTextContents();
  assert.deepEqual(shown.map((s) => s.trim()), ["Found my film from a blurry frame in seconds."]);
});

test("an admin writes a post with a picture, previews it, publishes it, and a visitor reads it", async () => {
  const admin = await app.newPage({ width: 1280 });
  await signIn(admin, "author", { admin: true });
  await admin.goto(`${app.url}/admin/blog`);
  await admin.getByRole("link", { name: "New post" }).click();
  await admin.waitForURL(/\/admin\/blog\/new$/);
  await admin.getByLabel("Title", { exact: true }).fill("How We Found the Diner Scene");
  assert.equal(await admin.getByLabel("Slug").inputValue(), "how-we-found-the-diner-scene", "slug follows the title");
  await admin.getByLabel("Summary").fill("A reader sent one blurry frame of a diner. Here is how the engines named the film in seconds.");
  await admin.getByLabel("Category").fill("Stories");
  await admin.getByLabel("Tags (comma-separated)").fill("diner, case study");
  await admin.getByLabel("Article (Markdown)").fill("## The frame\n\nA **neon sign** and a jukebox were enough.\n\n<script>alert('x')</script>\n\n- the sign\n- the booths");
  // The live preview is the server's sanitised rendering.
  const preview = admin.locator(".studio-preview .prose");
  await preview.locator("strong", { hasText: "neon sign" }).waitFor();
  assert.equal(await preview.locator("script").count(), 0);
  await admin.getByText(/1 min read/).first().waitFor();
  await admin.getByLabel("Featured image").setInputFiles(await makeJpeg(admin));
  await admin.getByRole("img", { name: "Featured image: current picture" }).waitFor();
  await admin.getByLabel("Meta description").fill("How one blurry diner frame was identified in seconds.");
  await app.screenshot(admin, "studio-editor-1280");
  await app.assertAccessible(admin, { include: "main" });

  // Preview saves it as a draft and shows it as visitors will see it.
  await admin.getByRole("button", { name: "Preview" }).click();
  await admin.waitForURL(/\/admin\/blog\/\d+\/preview$/);
  await admin.getByText("Preview of a draft: visitors cannot see this post.").waitFor();
  await admin.getByRole("heading", { level: 1, name: "How We Found the Diner Scene" }).waitFor();
  await app.screenshot(admin, "studio-preview-1280");
  const visitor = await app.newPage({ width: 390 });
  const hidden = await visitor.goto(`${app.url}/blog/how-we-found-the-diner-scene`);
  assert.equal(hidden.status(), 404, "a draft is invisible to visitors");

  await admin.getByRole("link", { name: "Back to the editor" }).click();
  await admin.getByLabel("Published").check();
  await admin.getByRole("button", { name: "Publish" }).click();
  await admin.getByText("published", { exact: true }).first().waitFor();
  await admin.getByRole("link", { name: "View on the blog" }).waitFor();
  app.assertNoConsoleErrors(admin);

  for (const width of [390, 1280]) {
    const reader = await app.newPage({ width });
    await reader.goto(`${app.url}/blog`);
    await reader.getByRole("link", { name: "How We Found the Diner Scene" }).first().click();
    await reader.getByRole("heading", { level: 1, name: "How We Found the Diner Scene" }).waitFor();
    const img = reader.locator(".article-image");
    assert.ok(await img.getAttribute("srcset"));
    assert.equal(await img.getAttribute("width"), "1600");
    assert.equal(await img.evaluate((el) => el.complete && el.naturalWidth > 0), true, "the picture loads");
    assert.equal(await reader.locator(".prose script").count(), 0);
    await app.screenshot(reader, `studio-published-post-${width}`);
    await app.assertAccessible(reader, { include: "main" });
    app.assertNoConsoleErrors(reader);
  }
  const feed = await (await visitor.request.get(`${app.url}/blog/feed.xml`)).text();
  assert.match(feed, /How We Found the Diner Scene/);

  // The editor at phone width.
  const phone = await app.newPage({ width: 390 });
  await phone.goto(`${app.url}/`);
  await phone.evaluate(async () =>
    fetch("/api/login", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ username: "author", password: "secret-pass" }) }),
  );
  await phone.goto(`${app.url}/admin/blog`);
  await app.screenshot(phone, "studio-blog-list-390");
  await phone.getByRole("link", { name: "Edit How We Found the Diner Scene" }).click();
  await phone.getByLabel("Title", { exact: true }).waitFor();
  await app.screenshot(phone, "studio-editor-390");
  await app.assertAccessible(phone, { include: "main" });
  await phone.goto(`${app.url}/admin/seo`);
  await phone.getByRole("heading", { name: "Checks" }).waitFor();
  await app.screenshot(phone, "studio-seo-390");
  await app.assertAccessible(phone, { include: "main" });
});
