/**
 * The small debug overlay behind `?debug=true` (islands, log, theme, motion) and
 * `?vitals=true` (first paint, largest paint, layout shift). Loaded only when asked for.
 */
import { getLogs } from "./log";
import { watchVitals } from "./vitals";

export function showDebugOverlay(params: URLSearchParams): void {
  const box = document.createElement("aside");
  box.className = "debug-overlay";
  box.setAttribute("aria-label", "Debug information");
  const list = document.createElement("dl");
  box.append(list);
  const close = document.createElement("button");
  close.type = "button";
  close.textContent = "×";
  close.setAttribute("aria-label", "Close debug overlay");
  close.dataset.tooltip = "Close";
  close.addEventListener("click", () => box.remove());
  box.prepend(close);
  document.body.append(box);

  const values = new Map<string, string>();
  const render = () => {
    list.replaceChildren(
      ...Array.from(values, ([k, v]) => {
        const row = document.createElement("div");
        const dt = document.createElement("dt");
        dt.textContent = k;
        const dd = document.createElement("dd");
        dd.textContent = v;
        row.append(dt, dd);
        return row;
      }),
    );
  };

  if (params.get("debug") === "true") {
    const refresh = () => {
      const marks = Array.from(document.querySelectorAll<HTMLElement>("[data-island]"));
      values.set("islands", marks.map((m) => `${m.dataset.island}:${m.dataset.islandState ?? "waiting"}`).join(" ") || "none");
      const logs = getLogs();
      values.set("log", `${logs.filter((l) => l.level === "error").length} errors, ${logs.filter((l) => l.level === "warning").length} warnings`);
      values.set("theme", document.documentElement.dataset.theme ?? "");
      values.set("motion", document.documentElement.dataset.motion ?? "");
      values.set("viewport", `${window.innerWidth}×${window.innerHeight}`);
      render();
    };
    refresh();
    setInterval(refresh, 1000);
  }

  if (params.get("vitals") === "true") {
    const nav = performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming | undefined;
    if (nav) values.set("TTFB", `${Math.round(nav.responseStart)} ms`);
    let cls = 0;
    // Watched for 2 s, then disconnected (1 s fallback without an observer): lib/vitals.ts.
    watchVitals((entries) => {
      for (const e of entries) {
        if (e.entryType === "paint" && e.name === "first-contentful-paint") values.set("FCP", `${Math.round(e.startTime)} ms`);
        if (e.entryType === "largest-contentful-paint") values.set("LCP", `${Math.round(e.startTime)} ms`);
        if (e.entryType === "layout-shift" && !(e as unknown as { hadRecentInput: boolean }).hadRecentInput) {
          cls += (e as unknown as { value: number }).value;
          values.set("CLS", cls.toFixed(3));
        }
      }
      render();
    });
    render();
  }
}
