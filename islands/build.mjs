// Builds the islands and the site CSS into ../assets/dist with content-hashed names, and
// writes ../assets/dist/manifest.json, which maps logical names ("runtime.js", "app.css")
// to public URLs ("/assets/dist/runtime-HASH.js"). The Rust side reads that manifest
// (src/views/assets.rs). `node build.mjs --watch` rebuilds on change.
//
// Output layout: runtime-HASH.js (the only entry a page loads), one chunk per island
// (dynamic imports in src/islands/index.ts), shared chunks (React lives in one of them),
// app-HASH.css (assets/css/app.css with its @import of islands.css inlined). Files from
// earlier builds that are no longer produced are removed.
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
  entryPoints: { runtime: path.join(here, "src/runtime.ts") },
  format: "esm",
  splitting: true,
  platform: "browser",
  target: ["es2022", "chrome111", "firefox115", "safari16"],
  jsx: "automatic",
  define: { "process.env.NODE_ENV": '"production"' },
};

const cssOptions = {
  ...common,
  entryPoints: { app: path.resolve(here, "../assets/css/app.css") },
  target: ["chrome111", "firefox115", "safari16"],
  loader: { ".woff2": "file", ".woff": "file", ".svg": "file", ".png": "file", ".jpg": "file", ".webp": "file" },
  publicPath,
};

/** Outputs of the last JS and CSS builds, keyed by which build made them. */
const outputs = { js: null, css: null };

async function writeManifest() {
  if (!outputs.js || !outputs.css) return;
  const manifest = {};
  const keep = new Set(["manifest.json"]);
  for (const meta of [outputs.js, outputs.css]) {
    for (const [file, info] of Object.entries(meta.outputs)) {
      const rel = path.relative(outdir, path.resolve(file)).split(path.sep).join("/");
      keep.add(rel);
      if (info.entryPoint && !file.endsWith(".map")) {
        const logical = `${path.basename(rel).replace(/-[A-Z0-9]{8}(\.\w+)$/, "$1")}`;
        if (info.entryPoint.endsWith("src/runtime.ts") || info.entryPoint.endsWith("css/app.css")) {
          manifest[logical] = `${publicPath}/${rel}`;
        }
      }
    }
  }
  await writeFile(path.join(outdir, "manifest.json"), JSON.stringify(manifest, null, 2) + "\n");
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
  await Promise.all([js.watch(), css.watch()]);
  console.log(`watching; writing ${path.relative(process.cwd(), outdir)}`);
} else {
  const [js, css] = await Promise.all([esbuild.build(jsOptions), esbuild.build(cssOptions)]);
  outputs.js = js.metafile;
  outputs.css = css.metafile;
  const manifest = await writeManifest();
  for (const [name, url] of Object.entries(manifest)) console.log(`${name.padEnd(12)} ${url}`);
}
