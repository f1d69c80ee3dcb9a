// @vitest-environment node
/**
 * Islands cannot go missing. A page marks an island by name (`data-island="Name"` in a
 * template, or `Island::new("Name", ...)` in Rust for the templates that print the name);
 * the runtime mounts it only if `src/islands/index.ts` registers that name. A name it does
 * not know leaves the server's no-JavaScript fallback on the page for good, which is how
 * `/test` said "JavaScript is off" to everyone. These tests read the templates and the Rust
 * sources, so a mark without its island fails here, before any browser sees it.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { islands } from "../src/islands/index";

const islandsRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const repoRoot = path.resolve(islandsRoot, "..");

function filesUnder(dir: string, ext: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) return filesUnder(full, ext);
    return entry.endsWith(ext) ? [full] : [];
  });
}

interface Mark {
  name: string;
  where: string;
}

/** Every island name the server can print, with the file that prints it. */
function marks(): Mark[] {
  const found: Mark[] = [];
  const rel = (file: string) => path.relative(repoRoot, file);
  for (const file of filesUnder(path.join(repoRoot, "templates"), ".html")) {
    // Literal names only; `data-island="{{ x.name }}"` prints a name set in Rust (below).
    for (const m of readFileSync(file, "utf8").matchAll(/data-island="([^"{]+)"/g)) found.push({ name: m[1]!, where: rel(file) });
  }
  for (const file of filesUnder(path.join(repoRoot, "src"), ".rs")) {
    for (const m of readFileSync(file, "utf8").matchAll(/Island::new\(\s*"([^"]+)"/g)) found.push({ name: m[1]!, where: rel(file) });
  }
  return found;
}

describe("island registry", () => {
  it("registers exactly the islands in src/islands/", () => {
    const files = readdirSync(path.join(islandsRoot, "src/islands"))
      .filter((f) => f.endsWith(".tsx"))
      .map((f) => f.replace(/\.tsx$/, ""))
      .sort();
    expect(Object.keys(islands).sort()).toEqual(files);
  });

  it("has an island for every name a template or a Rust handler marks", () => {
    const all = marks();
    // The scan itself must find the marks we know of, or this test could pass on nothing.
    const names = new Set(all.map((m) => m.name));
    for (const known of ["Uploader", "TestPage", "PwaSettings", "AuthScreen", "BlogEditor"]) expect(names).toContain(known);
    const missing = all.filter((m) => !Object.hasOwn(islands, m.name)).map((m) => `${m.name} (${m.where})`);
    expect(missing).toEqual([]);
  });

  it("types every island the server mounts by its props generated from Rust", () => {
    // `Island::new("Name", &props)` takes only props deriving ts-rs `TS`; the island must
    // take the generated `NameProps` (src/generated/, from src/routes/island_types.rs)
    // instead of an interface of its own that could drift from what the server sends.
    const generated = path.join(islandsRoot, "src/generated");
    const rust = [...new Set(marks().filter((m) => m.where.endsWith(".rs")).map((m) => m.name))].sort();
    expect(rust.length).toBeGreaterThan(8);
    const problems: string[] = [];
    for (const name of rust) {
      if (!existsSync(path.join(generated, `${name}Props.ts`))) problems.push(`src/generated/${name}Props.ts is missing`);
      const source = readFileSync(path.join(islandsRoot, "src/islands", `${name}.tsx`), "utf8");
      if (!source.includes(`from "../generated/${name}Props"`)) problems.push(`src/islands/${name}.tsx does not import its ${name}Props`);
      if (new RegExp(`(interface|type) ${name}Props\\b`).test(source)) problems.push(`src/islands/${name}.tsx declares ${name}Props by hand`);
    }
    // And no generated props type is left over from an island that is gone.
    const props = readdirSync(generated).filter((f) => /Props\.ts$/.test(f)).map((f) => f.replace(/Props\.ts$/, ""));
    for (const name of props) if (!rust.includes(name)) problems.push(`src/generated/${name}Props.ts has no Island::new("${name}", ...)`);
    expect(problems).toEqual([]);
  });

  it("loads every registered island as a component", async () => {
    for (const [name, load] of Object.entries(islands)) {
      const mod = await load();
      expect(typeof mod.default, name).toBe("function");
    }
  });
});
