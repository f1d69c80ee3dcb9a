import { afterEach, describe, expect, it, vi } from "vitest";
import { FALLBACK_MS, OBSERVE_MS, watchVitals } from "../src/lib/vitals";

/** A stand-in PerformanceObserver that records what it was asked and whether it disconnected. */
function fakeObserver(supported: string[]) {
  const made: Array<{ types: string[]; disconnected: boolean; push: (e: PerformanceEntry[]) => void }> = [];
  class FakeObserver {
    types: string[] = [];
    disconnected = false;
    constructor(readonly cb: (list: { getEntries: () => PerformanceEntry[] }) => void) {
      const self = this;
      made.push({
        get types() {
          return self.types;
        },
        get disconnected() {
          return self.disconnected;
        },
        push: (e) => {
          if (!self.disconnected) cb({ getEntries: () => e });
        },
      });
    }
    observe({ type }: { type: string }) {
      if (!supported.includes(type)) throw new TypeError("unsupported");
      this.types.push(type);
    }
    disconnect() {
      this.disconnected = true;
    }
  }
  return { Observer: FakeObserver as unknown as typeof PerformanceObserver, made };
}

const entry = (entryType: string, name = "", startTime = 100) => ({ entryType, name, startTime }) as PerformanceEntry;

describe("watchVitals (SPEC section 9: disconnect after 2 s, 1 s fallback)", () => {
  afterEach(() => vi.useRealTimers());

  it("observes the entry types it can and disconnects after 2 s", () => {
    vi.useFakeTimers();
    const { Observer, made } = fakeObserver(["paint", "layout-shift"]);
    const seen: PerformanceEntry[] = [];
    watchVitals((e) => seen.push(...e), undefined, { setTimeout, clearTimeout, performance, PerformanceObserver: Observer } as never);
    expect(made[0]!.types).toEqual(["paint", "layout-shift"]);
    made[0]!.push([entry("paint", "first-contentful-paint")]);
    vi.advanceTimersByTime(OBSERVE_MS - 1);
    expect(made[0]!.disconnected).toBe(false);
    vi.advanceTimersByTime(1);
    expect(made[0]!.disconnected).toBe(true);
    made[0]!.push([entry("layout-shift")]);
    expect(seen.map((e) => e.entryType)).toEqual(["paint"]);
  });

  it("without an observer, reads the buffered entries once after 1 s", () => {
    vi.useFakeTimers();
    const perf = { getEntriesByType: vi.fn((t: string) => (t === "paint" ? [entry("paint", "first-contentful-paint", 321)] : [])) };
    const seen: PerformanceEntry[] = [];
    watchVitals((e) => seen.push(...e), undefined, { setTimeout, clearTimeout, performance: perf } as never);
    vi.advanceTimersByTime(FALLBACK_MS - 1);
    expect(seen).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(seen.map((e) => e.startTime)).toEqual([321]);
    vi.advanceTimersByTime(10_000);
    expect(perf.getEntriesByType).toHaveBeenCalledTimes(3);
  });

  it("falls back too when the observer accepts none of the types", () => {
    vi.useFakeTimers();
    const { Observer, made } = fakeObserver([]);
    const perf = { getEntriesByType: vi.fn(() => [entry("paint")]) };
    const seen: PerformanceEntry[] = [];
    watchVitals((e) => seen.push(...e), ["paint"], { setTimeout, clearTimeout, performance: perf, PerformanceObserver: Observer } as never);
    expect(made[0]!.disconnected).toBe(true);
    vi.advanceTimersByTime(FALLBACK_MS);
    expect(seen).toHaveLength(1);
  });
});
