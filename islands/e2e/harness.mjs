// Browser-test harness: the real `reelfind` binary plus headless Debian Chromium.
//
// It builds nothing. Before running: `npm run build` (islands) and `cargo build --bin reelfind`.
// The binary is $REELFIND_BIN or ../target/debug/reelfind relative to islands/ (that is,
// <repo>/target/debug/reelfind; $CARGO_TARGET_DIR/debug/reelfind when that is set).
//
// API (import from "./harness.mjs"):
//
//   const app = await startApp({ env })   // server on a free port, fresh temp data dir and
//                                          // SQLite database, waits for /healthz, then Chromium
//   app.url                                // "http://127.0.0.1:PORT"
//   app.dataDir                            // the temp REELFIND_DATA_DIR (mail outbox: dataDir/outbox)
//   app.serverLog()                        // everything the server printed so far
//   await app.cli(["user", "create", ...], "stdin text")   // runs the binary with the same env
//   await app.signInNew(page, "ada")       // makes the account with the CLI (password
//                                          // "secret-pass") and signs `page` in through the API
//   const page = await app.newPage({ width: 390 })  // new context (own cookies/storage, and its
//                                          // own client address: the server trusts X-Forwarded-For
//                                          // here and each context sends a different one, so
//                                          // per-address limits such as the guest's one free
//                                          // identification apply per context, as per visitor);
//                                          // width defaults to 1280, height to 900 (844 at <=480);
//                                          // also colorScheme, reducedMotion, javaScriptEnabled
//   page.consoleErrors                     // console errors and uncaught page errors, as strings
//   app.assertNoConsoleErrors(page, { allow: [/regex/] })  // throws listing them (minus allowed ones)
//   await app.screenshot(page, "home-390") // saves e2e/artifacts/home-390.png (gitignored)
//   await app.assertAccessible(page, { include: "[data-island=Uploader]" })  // axe-core WCAG 2 A/AA
//                                          // rules on the page (or a part); throws listing violations
//   await app.stop()                       // closes Chromium, SIGTERMs the server, removes the data dir
//
// A test file (run by `npm run e2e`, i.e. `node --test e2e/`):
//
//   import { after, before, test } from "node:test";
//   import assert from "node:assert/strict";
//   import { startApp } from "./harness.mjs";
//   let app;
//   before(async () => { app = await startApp(); });
//   after(async () => { await app?.stop(); });
//   test("home renders", async () => {
//     const page = await app.newPage();
//     await page.goto(app.url + "/");
//     assert.equal(await page.locator("h1").count(), 1);
//     app.assertNoConsoleErrors(page);
//   });
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const axeSource = createRequire(import.meta.url).resolve("axe-core/axe.min.js");

const here = path.dirname(fileURLToPath(import.meta.url));
export const repoRoot = path.resolve(here, "../..");
export const artifactsDir = path.join(here, "artifacts");

export const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
export const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"];

/** Where the binary is: $REELFIND_BIN, else $CARGO_TARGET_DIR/debug, else <repo>/target/debug. */
export function binaryPath() {
  if (process.env.REELFIND_BIN) return path.resolve(process.env.REELFIND_BIN);
  const candidates = [path.resolve(here, "..", "../target/debug/reelfind")];
  if (process.env.CARGO_TARGET_DIR) candidates.unshift(path.resolve(process.env.CARGO_TARGET_DIR, "debug/reelfind"));
  return candidates.find((p) => existsSync(p)) ?? candidates[candidates.length - 1];
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

async function waitForHealth(url, child, log, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`reelfind exited with ${child.exitCode} before it was healthy:\n${log()}`);
    try {
      const res = await fetch(`${url}/healthz`);
      if (res.ok) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`reelfind was not healthy within ${timeoutMs} ms:\n${log()}`);
}

/** Starts the server and the browser. `env` adds or overrides environment variables. */
export async function startApp({ env = {} } = {}) {
  const bin = binaryPath();
  if (!existsSync(bin)) throw new Error(`no reelfind binary at ${bin}: run \`cargo build --bin reelfind\` (or set REELFIND_BIN)`);
  if (!existsSync(path.join(repoRoot, "assets/dist/manifest.json"))) {
    throw new Error("assets/dist/manifest.json is missing: run `npm run build` in islands/ first");
  }
  const dataDir = await mkdtemp(path.join(os.tmpdir(), "reelfind-e2e-"));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const fullEnv = {
    ...process.env,
    REELFIND_ADDR: `127.0.0.1:${port}`,
    REELFIND_PUBLIC_URL: url,
    REELFIND_DATA_DIR: dataDir,
    DATABASE_URL: `sqlite://${path.join(dataDir, "reelfind.db")}?mode=rwc`,
    REELFIND_ASSETS_DIR: path.join(repoRoot, "assets"),
    RUST_LOG: process.env.RUST_LOG || "warn",
    REELFIND_TRUST_PROXY: "true",
    ...env,
  };
  let output = "";
  const child = spawn(bin, ["serve"], { cwd: repoRoot, env: fullEnv, stdio: ["ignore", "pipe", "pipe"] });
  child.stdout.on("data", (d) => (output += d));
  child.stderr.on("data", (d) => (output += d));
  const serverLog = () => output;

  let browser;
  try {
    await waitForHealth(url, child, serverLog);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
  } catch (error) {
    child.kill("SIGKILL");
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }

  const contexts = new Set();
  let visitors = 0;

  return {
    url,
    dataDir,
    browser,
    serverLog,

    async newPage({ width = 1280, height, colorScheme, reducedMotion, javaScriptEnabled = true } = {}) {
      const context = await browser.newContext({
        viewport: { width, height: height ?? (width <= 480 ? 844 : 900) },
        colorScheme,
        reducedMotion,
        javaScriptEnabled,
        isMobile: false,
        // A documentation-range address per context (198.51.100.0/24, then 203.0.113.0/24).
        extraHTTPHeaders: { "x-forwarded-for": ++visitors < 255 ? `198.51.100.${visitors}` : `203.0.113.${visitors % 255}` },
      });
      contexts.add(context);
      const page = await context.newPage();
      page.consoleErrors = [];
      page.on("console", (msg) => {
        if (msg.type() === "error") page.consoleErrors.push(`${msg.text()} (${msg.location().url || "?"})`);
      });
      page.on("pageerror", (err) => page.consoleErrors.push(`uncaught: ${err.message}`));
      return page;
    },

    assertNoConsoleErrors(page, { allow = [] } = {}) {
      const errors = page.consoleErrors.filter((e) => !allow.some((re) => re.test(e)));
      if (errors.length) {
        throw new Error(`console errors on ${page.url()}:\n  ${errors.join("\n  ")}`);
      }
    },

    async assertAccessible(page, { include, disable = [] } = {}) {
      // Colours are judged as painted: during the page's 420 ms fade-in every element is
      // partly transparent, so axe would see a blend (stop 18's CI measured a red button at
      // 4.46:1 that is 4.86:1 at rest). Wait for running time-based animations that end
      // (not spinners, not scroll-driven ones), at most 2 s.
      await page.evaluate(async () => {
        const ending = document.getAnimations().filter((a) => {
          const t = a.effect?.getComputedTiming();
          return a.playState === "running" && a.timeline instanceof DocumentTimeline && t && Number.isFinite(t.endTime);
        });
        await Promise.race([Promise.all(ending.map((a) => a.finished.catch(() => {}))), new Promise((r) => setTimeout(r, 2000))]);
      });
      if (!(await page.evaluate(() => "axe" in window))) await page.addScriptTag({ path: axeSource });
      const violations = await page.evaluate(
        async ({ include, disable }) => {
          const rules = Object.fromEntries(disable.map((id) => [id, { enabled: false }]));
          const res = await window.axe.run(include ?? document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] }, rules });
          return res.violations.map((v) => `${v.id} (${v.impact}): ${v.help}\n      ${v.nodes.slice(0, 4).map((n) => `${n.target.join(" ")} ${n.failureSummary?.split("\n")[1]?.trim() ?? ""}`).join("\n      ")}`);
        },
        { include, disable },
      );
      if (violations.length) throw new Error(`accessibility violations on ${page.url()}:\n  ${violations.join("\n  ")}`);
    },

    async screenshot(page, name) {
      await mkdir(artifactsDir, { recursive: true });
      const file = path.join(artifactsDir, `${name}.png`);
      await page.screenshot({ path: file, fullPage: false });
      return file;
    },

    cli(args, input = "") {
      return new Promise((resolve, reject) => {
        const p = spawn(bin, args, { cwd: repoRoot, env: fullEnv, stdio: ["pipe", "pipe", "pipe"] });
        let out = "";
        let err = "";
        p.stdout.on("data", (d) => (out += d));
        p.stderr.on("data", (d) => (err += d));
        p.on("error", reject);
        p.on("close", (code) => (code === 0 ? resolve({ stdout: out, stderr: err }) : reject(new Error(`reelfind ${args.join(" ")} exited ${code}: ${err}`))));
        p.stdin.end(input);
      });
    },

    /** Makes `username` with the CLI (email `{username}@example.test`, password
     * "secret-pass") and signs `page` in with it through `/api/login`. */
    async signInNew(page, username) {
      await this.cli(["user", "create", "--username", username, "--email", `${username}@example.test`], "secret-pass\n");
      await page.goto(`${url}/`);
      const status = await page.evaluate(async (u) => {
        const res = await fetch("/api/login", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ username: u, password: "secret-pass" }),
        });
        return res.status;
      }, username);
      if (status !== 200) throw new Error(`signing in as ${username} answered ${status}`);
    },

    async stop() {
      for (const c of contexts) await c.close().catch(() => {});
      await browser?.close().catch(() => {});
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
        await exited;
        clearTimeout(timer);
      }
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
