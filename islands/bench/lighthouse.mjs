// Lighthouse over every public page of the real binary, in Debian's Chromium.
//
//   node islands/bench/lighthouse.mjs [--runs 3] [--bin target/release/reelfind] [--only /,/blog] [--json out.json] [--lhr DIR]
//
// (--lhr DIR keeps every full Lighthouse report there, for a closer look.)
//
// Installs its own dependency (the `lighthouse` npm package, ~170 MB, kept out of the
// islands' CI install) into islands/bench/node_modules on first use. Starts the binary
// (default: target/release/reelfind; build it with `cargo build --release`) on a fresh
// SQLite database through the browser-test harness, adds a blog post and a shared
// identification so their pages exist, and runs Lighthouse's default mobile audit
// (simulated slow 4G, 4x CPU slowdown) `--runs` times per page. It prints, per page, the
// median performance score with LCP, TBT, CLS and the script bytes, and the
// accessibility, best-practices and SEO scores, plus the load average before and after.
// Needs `npm run build` in islands/ first (the harness checks).
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "../..");

function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1] : fallback;
}

const runs = Number(arg("runs", "3"));
const bin = path.resolve(repo, arg("bin", "target/release/reelfind"));
const only = arg("only", "");
const jsonOut = arg("json", "");
const lhrDir = arg("lhr", "");

if (!existsSync(path.join(here, "node_modules/lighthouse"))) {
  console.error("bench: installing lighthouse into islands/bench/node_modules");
  execFileSync("npm", ["ci", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: here, stdio: "inherit" });
}
process.env.REELFIND_BIN = bin;
process.env.CHROME_PATH ??= "/usr/bin/chromium";

const { default: lighthouse } = await import("lighthouse");
const chromeLauncher = await import("chrome-launcher");
const { startApp } = await import("../e2e/harness.mjs");

const loadavg = () => os.loadavg().map((n) => n.toFixed(2)).join(" ");
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)];
};

const app = await startApp({ env: { REELFIND_LIBRARY_DEMO: "false", RUST_LOG: "warn" } });
const results = [];
let chrome;
try {
  // A public blog post (the first seeded one) and the 404 page.
  const blog = await (await fetch(`${app.url}/api/blog?limit=1`)).json();
  const slug = blog.posts?.[0]?.slug;
  const pages = [
    "/",
    "/about",
    "/blog",
    ...(slug ? [`/blog/${slug}`] : []),
    "/auth",
    "/history",
    "/profile",
    "/terms-of-service",
    "/test",
    "/pwa-settings",
    "/admin",
    "/email-verification-pending?email=someone%40example.com",
    "/no-such-page",
  ].filter((p) => !only || only.split(",").includes(p));

  chrome = await chromeLauncher.launch({
    chromePath: process.env.CHROME_PATH,
    chromeFlags: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
  });
  const before = loadavg();
  for (const page of pages) {
    const samples = [];
    for (let i = 0; i < runs; i++) {
      const r = await lighthouse(`${app.url}${page}`, {
        port: chrome.port,
        output: "json",
        logLevel: "error",
        onlyCategories: ["performance", "accessibility", "best-practices", "seo"],
      });
      const lhr = r.lhr;
      if (lhr.runtimeError) {
        console.log(`${page}: Lighthouse could not audit it (${lhr.runtimeError.code})`);
        continue;
      }
      if (lhrDir) await writeFile(path.join(lhrDir, `${page.replace(/[^a-z0-9]+/gi, "_") || "home"}-${i}.json`), JSON.stringify(lhr));
      const a = lhr.audits;
      const scriptBytes = (a["resource-summary"]?.details?.items ?? []).find((x) => x.resourceType === "script")?.transferSize ?? 0;
      samples.push({
        performance: Math.round(lhr.categories.performance.score * 100),
        accessibility: Math.round(lhr.categories.accessibility.score * 100),
        bestPractices: Math.round(lhr.categories["best-practices"].score * 100),
        seo: Math.round(lhr.categories.seo.score * 100),
        lcpMs: Math.round(a["largest-contentful-paint"].numericValue),
        tbtMs: Math.round(a["total-blocking-time"].numericValue),
        cls: Number((a["cumulative-layout-shift"]?.numericValue ?? 0).toFixed(3)),
        fcpMs: Math.round(a["first-contentful-paint"].numericValue),
        scriptKb: Number((scriptBytes / 1024).toFixed(1)),
        failing: Object.values(a)
          .filter((x) => x.score !== null && x.score < 0.9 && x.scoreDisplayMode !== "informative" && x.scoreDisplayMode !== "manual")
          .map((x) => x.id),
      });
    }
    if (samples.length === 0) continue;
    const pick = (k) => median(samples.map((s) => s[k]));
    const row = {
      page,
      runs: samples.length,
      performance: pick("performance"),
      performanceAll: samples.map((s) => s.performance),
      accessibility: pick("accessibility"),
      bestPractices: pick("bestPractices"),
      seo: pick("seo"),
      lcpMs: pick("lcpMs"),
      tbtMs: pick("tbtMs"),
      cls: pick("cls"),
      fcpMs: pick("fcpMs"),
      scriptKb: pick("scriptKb"),
      failing: [...new Set(samples.flatMap((s) => s.failing))],
    };
    results.push(row);
    console.log(
      `${page.padEnd(28)} perf ${String(row.performance).padStart(3)} (${row.performanceAll.join("/")})  a11y ${row.accessibility}  bp ${row.bestPractices}  seo ${row.seo}  ` +
        `LCP ${row.lcpMs} ms  TBT ${row.tbtMs} ms  CLS ${row.cls}  JS ${row.scriptKb} KB` +
        (row.failing.length ? `  below 0.9: ${row.failing.join(", ")}` : ""),
    );
  }
  const after = loadavg();
  console.log(`load average before ${before}, after ${after}; ${runs} run(s) per page, median shown; binary ${path.relative(repo, bin)}`);
  if (jsonOut) await writeFile(jsonOut, JSON.stringify({ loadBefore: before, loadAfter: after, bin, results }, null, 2) + "\n");
} finally {
  await chrome?.kill();
  await app.stop();
}
