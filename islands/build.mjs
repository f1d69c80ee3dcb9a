// Builds the islands and the site CSS into ../assets/dist with content-hashed names, and
// writes ../assets/dist/manifest.json, which maps logical names ("runtime.js", "app.css")
// to public URLs ("/assets/dist/runtime-HASH.js"). The Rust side reads that manifest
// (src/views/assets.rs). `node build.mjs --watch` rebuilds on change.
//
// Output layout: runtime-HASH.js (the only entry a page loads), one chunk per island
// (dynamic imports in src/islands/index.ts), shared chunks (React lives in one of them),
// app-HASH.css (assets/css/app.css with its @import of islands.css inlined), and
// sw-HASH.js, the service worker (one self-contained script; the server serves it at /sw.js).
// precache.json lists the app shell the service worker stores at install: the runtime,
// the chunks it imports statically, and the stylesheet. Files from earlier builds that are
// no longer produced are removed. admin.json lists what the admin pages' islands need
// beyond the shell (their chunks, React's mount chunk, everything they import statically):
// the service worker caches it on PREFETCH_ADMIN, when an admin signs in.
import * as esbuild from "esbuild";
import { mkdir, readdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const outdir = path.resolve(here, "../assets/dist");
const publicPath = "/assets/dist";
const watch = process.argv.includes("--watch");

const common = {
  bundle: true,
  outdir,
  entryNames: "[name]-[hash]",
  chunkNames: "chunks/[name]-[hash]",
  assetNames: "media/[name]-[hash]",
  minify: true,
  sourcemap: "linked",
  metafile: true,
  logLevel: "warning",
  legalComments: "linked",
};

const jsOptions = {
  ...common,
  // apiref: the API reference viewer, loaded by /docs/api only (never by the runtime).
  entryPoints: { runtime: path.join(here, "src/runtime.ts"), apiref: path.join(here, "src/apiref/main.ts") },
  format: "esm",
  splitting: true,
  platform: "browser",
  target: ["es2022", "chrome111", "firefox115", "safari16"],
  jsx: "automatic",
  define: { "process.env.NODE_ENV": '"production"' },
};

const cssOptions = {
  ...common,
  // studio.css: the admin studio's own styles, linked only by /admin pages.
  entryPoints: {
    app: path.resolve(here, "../assets/css/app.css"),
    studio: path.resolve(here, "../assets/css/studio.css"),
  },
  target: ["chrome111", "firefox115", "safari16"],
  loader: { ".woff2": "file", ".woff": "file", ".svg": "file", ".png": "file", ".jpg": "file", ".webp": "file" },
  publicPath,
};

const swOptions = {
  ...common,
  entryPoints: { sw: path.join(here, "src/sw/sw.ts") },
  format: "iife",
  platform: "browser",
  target: ["es2022", "chrome111", "firefox115", "safari16"],
  sourcemap: false,
};

/** Islands of the admin pages (src/islands/NAME.tsx) whose code PREFETCH_ADMIN warms. */
const ADMIN_ISLANDS = ["BlogEditor", "Insight"];

/** Outputs of the last JS, CSS and service worker builds, keyed by which build made them. */
const outputs = { js: null, css: null, sw: null };

/** The runtime, every chunk it imports statically (transitively), and the stylesheet. */
function shellFiles(jsMeta, cssMeta) {
  const rel = (file) => path.relative(outdir, path.resolve(file)).split(path.sep).join("/");
  const files = new Set();
  const visit = (file) => {
    if (files.has(file) || !jsMeta.outputs[file]) return;
    files.add(file);
    for (const imp of jsMeta.outputs[file].imports ?? []) if (imp.kind === "import-statement") visit(imp.path);
  };
  for (const [file, info] of Object.entries(jsMeta.outputs)) {
    if (info.entryPoint?.endsWith("src/runtime.ts") && !file.endsWith(".map")) visit(file);
  }
  for (const [file, info] of Object.entries(cssMeta.outputs)) {
    // The public pages' stylesheet; the studio's is not part of the offline shell.
    if (info.entryPoint?.endsWith("css/app.css") && file.endsWith(".css")) files.add(file);
  }
  return [...files].map((f) => `${publicPath}/${rel(f)}`).sort();
}

/** The admin islands' chunks (and React's mount chunk), what they load statically, and the studio stylesheet. */
function adminFiles(jsMeta, cssMeta) {
  const rel = (file) => path.relative(outdir, path.resolve(file)).split(path.sep).join("/");
  const files = new Set();
  const visit = (file) => {
    if (files.has(file) || !jsMeta.outputs[file]) return;
    files.add(file);
    for (const imp of jsMeta.outputs[file].imports ?? []) if (imp.kind === "import-statement") visit(imp.path);
  };
  const wanted = [...ADMIN_ISLANDS.map((n) => `src/islands/${n}.tsx`), "src/mount.tsx"];
  for (const [file, info] of Object.entries(jsMeta.outputs)) {
    if (file.endsWith(".map") || !info.entryPoint) continue;
    if (wanted.some((w) => info.entryPoint.endsWith(w))) visit(file);
  }
  for (const [file, info] of Object.entries(cssMeta.outputs)) {
    if (info.entryPoint?.endsWith("css/studio.css") && file.endsWith(".css")) files.add(file);
  }
  return [...files].map((f) => `${publicPath}/${rel(f)}`).sort();
}

async function writeManifest() {
  if (!outputs.js || !outputs.css || !outputs.sw) return;
  const manifest = {};
  const keep = new Set(["manifest.json", "precache.json", "admin.json"]);
  for (const meta of [outputs.js, outputs.css, outputs.sw]) {
    for (const [file, info] of Object.entries(meta.outputs)) {
      const rel = path.relative(outdir, path.resolve(file)).split(path.sep).join("/");
      keep.add(rel);
      if (info.entryPoint && !file.endsWith(".map")) {
        const logical = `${path.basename(rel).replace(/-[A-Z0-9]{8}(\.\w+)$/, "$1")}`;
        const named = ["src/runtime.ts", "src/apiref/main.ts", "css/app.css", "css/studio.css", "src/sw/sw.ts"];
        if (named.some((n) => info.entryPoint.endsWith(n))) {
          manifest[logical] = `${publicPath}/${rel}`;
        }
      }
    }
  }
  await writeFile(path.join(outdir, "manifest.json"), JSON.stringify(manifest, null, 2) + "\n");
  await writeFile(path.join(outdir, "precache.json"), JSON.stringify(shellFiles(outputs.js, outputs.css), null, 2) + "\n");
  await writeFile(path.join(outdir, "admin.json"), JSON.stringify(adminFiles(outputs.js, outputs.css), null, 2) + "\n");
  await prune(outdir, keep);
  return manifest;
}

/** Deletes files under `dir` that the last build did not produce. */
async function prune(dir, keep, prefix = "") {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      await prune(full, keep, rel);
      if ((await readdir(full)).length === 0) await rm(full, { recursive: true });
    } else if (!keep.has(rel)) {
      await rm(full);
    }
  }
}

function report(kind) {
  return {
    name: `report-${kind}`,
    setup(build) {
      build.onEnd(async (result) => {
        if (result.errors.length) return;
        outputs[kind] = result.metafile;
        const manifest = await writeManifest();
        if (watch && manifest) console.log(`[${new Date().toLocaleTimeString()}] rebuilt ${kind}`);
      });
    },
  };
}

await mkdir(outdir, { recursive: true });
if (watch) {
  const js = await esbuild.context({ ...jsOptions, plugins: [report("js")] });
  const css = await esbuild.context({ ...cssOptions, plugins: [report("css")] });
  const sw = await esbuild.context({ ...swOptions, plugins: [report("sw")] });
  await Promise.all([js.watch(), css.watch(), sw.watch()]);
  console.log(`watching; writing ${path.relative(process.cwd(), outdir)}`);
} else {
  const [js, css, sw] = await Promise.all([
    esbuild.build(jsOptions),
    esbuild.build(cssOptions),
    esbuild.build(swOptions),
  ]);
  outputs.js = js.metafile;
  outputs.css = css.metafile;
  outputs.sw = sw.metafile;
  const manifest = await writeManifest();
  for (const [name, url] of Object.entries(manifest)) console.log(`${name.padEnd(12)} ${url}`);
}
