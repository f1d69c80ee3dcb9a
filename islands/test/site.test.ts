import { afterEach, describe, expect, it } from "vitest";
import { siteName } from "../src/lib/site";

describe("siteName", () => {
  afterEach(() => document.head.querySelector('meta[property="og:site_name"]')?.remove());

  it("follows the name the server rendered", () => {
    const meta = document.createElement("meta");
    meta.setAttribute("property", "og:site_name");
    meta.content = "  Cinema Finder ";
    document.head.append(meta);
    expect(siteName()).toBe("Cinema Finder");
  });

  it("falls back to the product name without the tag", () => {
    expect(siteName()).toBe("Reelfind");
  });
});
