// @vitest-environment node
/**
 * The engine list has one source of truth, `ENGINES` in src/services/engine_names.rs:
 * the server checks settings and profiles against it and renders the home page's picker
 * from it. The islands list the engines in the same order before the server's answer
 * arrives; this test keeps the two the same.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { ENGINE_ORDER } from "../src/identify/engines";

it("lists the engines the server lists, in its order", () => {
  const source = readFileSync(path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../src/services/engine_names.rs"), "utf8");
  const m = /pub const ENGINES: \[&str; \d+\] = \[([^\]]*)\]/.exec(source);
  expect(m, "ENGINES in src/services/engine_names.rs").not.toBeNull();
  const rust = [...m![1]!.matchAll(/"([^"]+)"/g)].map((x) => x[1]);
  expect([...ENGINE_ORDER]).toEqual(rust);
});
