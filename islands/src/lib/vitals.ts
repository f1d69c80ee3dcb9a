/**
 * The page's paint and layout-shift entries for the vitals overlay and the analytics tag's
 * page-load-time event (SPEC section 9: the performance observer disconnects after 2 s, with
 * a 1 s fallback).
 *
 * A PerformanceObserver watches for `OBSERVE_MS` and then disconnects (what it would see
 * later is the visitor's own doing, not the page's load). Where there is no observer, or it
 * accepts none of the entry types, the entries already buffered are read once after
 * `FALLBACK_MS` instead.
 */

export const OBSERVE_MS = 2000;
export const FALLBACK_MS = 1000;
export const VITAL_TYPES = ["paint", "largest-contentful-paint", "layout-shift"] as const;

/**
 * Calls `onEntries` with batches of entries of `types`; returns a function that stops early.
 * `win` is for tests.
 */
export function watchVitals(
  onEntries: (entries: PerformanceEntry[]) => void,
  types: readonly string[] = VITAL_TYPES,
  win: Pick<Window, "setTimeout" | "clearTimeout" | "performance"> & { PerformanceObserver?: typeof PerformanceObserver } = window,
): () => void {
  const Observer = win.PerformanceObserver;
  if (Observer) {
    const observer = new Observer((list) => onEntries(list.getEntries()));
    let watching = 0;
    for (const type of types) {
      try {
        observer.observe({ type, buffered: true });
        watching += 1;
      } catch {
        /* entry type not supported by this browser */
      }
    }
    if (watching > 0) {
      const timer = win.setTimeout(() => observer.disconnect(), OBSERVE_MS);
      return () => {
        win.clearTimeout(timer);
        observer.disconnect();
      };
    }
    observer.disconnect();
  }
  const timer = win.setTimeout(() => {
    const entries = types.flatMap((type) => {
      try {
        return win.performance.getEntriesByType(type);
      } catch {
        return [];
      }
    });
    if (entries.length) onEntries(entries);
  }, FALLBACK_MS);
  return () => win.clearTimeout(timer);
}
