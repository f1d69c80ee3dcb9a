import { describe, expect, it } from "vitest";
import { engineLabel, formatMs, percent, shortDay } from "../src/islands/Insight";

describe("Insight formatting", () => {
  it("shows UTC days as short dates", () => {
    expect(shortDay("2026-11-24")).toBe("Nov 24");
    expect(shortDay("2026-01-01")).toBe("Jan 1");
    expect(shortDay("not a day")).toBe("not a day");
  });
  it("rounds rates and latencies for reading at a glance", () => {
    expect(percent(2 / 3)).toBe("67%");
    expect(percent(0)).toBe("0%");
    expect(formatMs(840)).toBe("840 ms");
    expect(formatMs(1540)).toBe("1.5 s");
    expect(formatMs(42_000)).toBe("42 s");
  });
  it("names engines", () => {
    expect(engineLabel("library")).toBe("Library");
    expect(engineLabel("anthropic")).toBe("Anthropic Claude");
    expect(engineLabel("other")).toBe("other");
  });
});
