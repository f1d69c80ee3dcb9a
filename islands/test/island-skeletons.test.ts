/**
 * Pages whose island would otherwise replace a short note with a tall view render the
 * island's first view as server HTML (a skeleton), so mounting moves nothing on the page
 * (Lighthouse's layout shift). The skeleton is written twice, in the template and in the
 * island; these tests keep the words the same, since a different word is a different width.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { STATUS_TEXT } from "../src/islands/PwaSettings";
import { API_CHECKS, BROWSER_FACTS, INTERACTIVITY_HINT } from "../src/islands/TestPage";

const templates = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../templates");
const template = (name: string) => readFileSync(path.join(templates, name), "utf8").replaceAll("&apos;", "'");

describe("server skeletons of islands", () => {
  it("/pwa-settings reserves the space of every service worker status", () => {
    const html = template("pages/pwa_settings.html");
    for (const { label, detail } of Object.values(STATUS_TEXT)) {
      expect(html).toContain(`"${label}"`);
      expect(html).toContain(`"${detail}"`);
    }
  });

  it("/test shows the island's checks, facts and buttons", () => {
    const html = template("pages/test.html");
    for (const check of API_CHECKS) expect(html).toContain(`<dt>${check.label} <code>${check.url}</code></dt>`);
    for (const [label] of BROWSER_FACTS) expect(html).toContain(`"${label}"`);
    expect(html).toContain(INTERACTIVITY_HINT);
    expect(html).toContain(">Test API Connection<");
    expect(html).toContain(">Test Interactivity<");
  });
});
