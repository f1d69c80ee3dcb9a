/**
 * The admin dashboard's Insight tab: the figures the server computed for the chosen period
 * (src/services/insight.rs, the same JSON as GET /api/admin/insight) as charts a person can
 * read at a glance. Chart.js is part of this island's chunk, so only this page loads it.
 * Every chart is an image with a one-sentence summary for screen readers and a data table
 * under "Show the numbers".
 *
 * Props (`InsightProps`, generated from src/routes/admin/insight.rs): data.
 */
import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
  type ChartConfiguration,
} from "chart.js";
import { useEffect, useRef } from "react";
import type { Count } from "../generated/Count";
import type { Day } from "../generated/Day";
import type { InsightProps } from "../generated/InsightProps";
import { MemoryCharts, type ChartKit } from "../studio/InsightMemory";

Chart.register(BarController, BarElement, LineController, LineElement, PointElement, CategoryScale, LinearScale, Tooltip, Legend);

const ENGINE_NAMES: Record<string, string> = {
  google: "Google Gemini",
  openai: "OpenAI",
  xai: "xAI Grok",
  anthropic: "Anthropic Claude",
  library: "Library",
};

export const engineLabel = (id: string) => ENGINE_NAMES[id] ?? id;

/** `2026-11-24` as `Nov 24` (the day is UTC, so format it in UTC). */
export function shortDay(day: string): string {
  const d = new Date(`${day}T00:00:00Z`);
  if (Number.isNaN(d.getTime())) return day;
  return d.toLocaleDateString("en-US", { month: "short", day: "numeric", timeZone: "UTC" });
}

export const percent = (x: number) => `${Math.round(x * 100)}%`;

export function formatMs(ms: number): string {
  if (ms >= 10_000) return `${Math.round(ms / 1000)} s`;
  if (ms >= 1000) return `${(ms / 1000).toFixed(1)} s`;
  return `${ms} ms`;
}

const truncate = (s: string, n = 38) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** The page's colours (they follow the light or dark theme). */
function palette() {
  const css = getComputedStyle(document.documentElement);
  const v = (name: string, fallback: string) => css.getPropertyValue(name).trim() || fallback;
  // light-dark() values resolve only on an element's used colour; read them through one.
  const probe = document.createElement("span");
  document.body.appendChild(probe);
  const resolve = (name: string, fallback: string) => {
    probe.style.color = `var(${name}, ${fallback})`;
    return getComputedStyle(probe).color || v(name, fallback);
  };
  const colours = {
    primary: resolve("--primary", "#b45309"),
    blue: resolve("--blue", "#1f5fbf"),
    coral: resolve("--coral", "#cf3a3a"),
    green: resolve("--green", "#1d7a46"),
    violet: resolve("--violet", "#5b4ce0"),
    text: resolve("--text-muted", "#575e6d"),
    grid: resolve("--border", "#e3ded2"),
  };
  probe.remove();
  return colours;
}

type Table = { head: string[]; rows: (string | number)[][] };

interface ChartFigureProps {
  id: string;
  title: string;
  /** One sentence saying what the chart shows, read by screen readers. */
  summary: string;
  config: (colours: ReturnType<typeof palette>) => ChartConfiguration;
  table: Table;
  /** Shown instead of the chart when there is nothing to draw. */
  empty?: string | null;
  height?: number;
}

function ChartFigure({ id, title, summary, config, table, empty, height = 240 }: ChartFigureProps) {
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    if (empty || !canvas.current) return;
    const chart = new Chart(canvas.current, config(palette()));
    return () => chart.destroy();
    // The data never changes while the island lives (the period is a page of its own).
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [empty]);
  return (
    <figure className="insight-figure" aria-labelledby={`${id}-title`} data-chart={id}>
      <figcaption id={`${id}-title`} className="insight-figure-title">
        {title}
      </figcaption>
      {empty ? (
        <p className="muted insight-empty">{empty}</p>
      ) : (
        <div className="insight-canvas" style={{ height }}>
          <canvas ref={canvas} role="img" aria-label={summary} />
        </div>
      )}
      {!empty && (
        <details className="insight-numbers">
          <summary>Show the numbers</summary>
          <div className="table-wrap">
            <table className="admin-table">
              <thead>
                <tr>
                  {table.head.map((h) => (
                    <th key={h} scope="col">
                      {h}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {table.rows.map((r, i) => (
                  <tr key={i}>
                    {r.map((c, j) => (j === 0 ? <th key={j} scope="row">{c}</th> : <td key={j}>{c}</td>))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </details>
      )}
    </figure>
  );
}

function axes(colours: ReturnType<typeof palette>, horizontal = false, max?: number) {
  const value = { beginAtZero: true, max, ticks: { color: colours.text, precision: 0 }, grid: { color: colours.grid } };
  const category = { ticks: { color: colours.text, autoSkip: true, maxRotation: 0 }, grid: { display: false } };
  return horizontal ? { x: value, y: category } : { x: category, y: value };
}

const baseOptions = { responsive: true, maintainAspectRatio: false, animation: false as const };

function countChart(
  id: string,
  title: string,
  items: Count[],
  column: string,
  noun: string,
  colour: "primary" | "blue" | "violet",
  empty: string,
) {
  const top = items[0];
  return (
    <ChartFigure
      id={id}
      title={title}
      summary={
        top
          ? `${title}: ${items.length} entries; the first is ${top.label} with ${top.count} ${noun}.`
          : `${title}: none in this period.`
      }
      empty={items.length === 0 ? empty : null}
      height={Math.max(140, items.length * 30 + 40)}
      table={{ head: [column, noun[0]!.toUpperCase() + noun.slice(1)], rows: items.map((c) => [c.label, c.count]) }}
      config={(c) => ({
        type: "bar",
        data: {
          labels: items.map((i) => truncate(i.label)),
          datasets: [{ label: noun[0]!.toUpperCase() + noun.slice(1), data: items.map((i) => i.count), backgroundColor: c[colour], borderRadius: 4 }],
        },
        options: { ...baseOptions, indexAxis: "y", plugins: { legend: { display: false } }, scales: axes(c, true) },
      })}
    />
  );
}

export default function Insight({ data }: InsightProps) {
  const days = data.daily.map((d) => shortDay(d.day));
  const views = data.daily.reduce((n, d) => n + d.pageViews, 0);
  const ids = data.daily.reduce((n, d) => n + d.identified + d.notIdentified, 0);
  const busiest = data.daily.reduce<Day | null>((best, d) => (!best || d.pageViews > best.pageViews ? d : best), null);
  const conv = data.conversion;
  const engines = data.engines;

  return (
    <div className="insight-grid">
      <ChartFigure
        id="page-views"
        title="Page views per day"
        summary={
          views
            ? `${views} page views in ${data.days} days; the busiest day was ${shortDay(busiest!.day)} with ${busiest!.pageViews}.`
            : "No page views in this period."
        }
        empty={views === 0 ? "No page views in this period yet." : null}
        table={{ head: ["Day", "Page views"], rows: data.daily.map((d) => [d.day, d.pageViews]) }}
        config={(c) => ({
          type: "line",
          data: {
            labels: days,
            datasets: [
              {
                label: "Page views",
                data: data.daily.map((d) => d.pageViews),
                borderColor: c.primary,
                backgroundColor: c.primary,
                pointRadius: data.days > 30 ? 0 : 3,
                cubicInterpolationMode: "monotone",
              },
            ],
          },
          options: { ...baseOptions, plugins: { legend: { display: false } }, scales: axes(c) },
        })}
      />

      <ChartFigure
        id="identifications"
        title="Identifications per day"
        summary={
          ids
            ? `${data.totals.identified} identified and ${data.totals.notIdentified} not identified in ${data.days} days.`
            : "No identifications in this period."
        }
        empty={ids === 0 ? "No identifications in this period yet." : null}
        table={{
          head: ["Day", "Identified", "Not identified"],
          rows: data.daily.map((d) => [d.day, d.identified, d.notIdentified]),
        }}
        config={(c) => ({
          type: "bar",
          data: {
            labels: days,
            datasets: [
              { label: "Identified", data: data.daily.map((d) => d.identified), backgroundColor: c.green, stack: "ids" },
              { label: "Not identified", data: data.daily.map((d) => d.notIdentified), backgroundColor: c.coral, stack: "ids" },
            ],
          },
          options: {
            ...baseOptions,
            plugins: { legend: { position: "bottom", labels: { color: c.text, boxWidth: 12 } } },
            scales: { ...axes(c), x: { ...axes(c).x, stacked: true }, y: { ...axes(c).y, stacked: true } },
          },
        })}
      />

      <ChartFigure
        id="engine-success"
        title="Success rate per engine"
        summary={
          engines.length
            ? engines.map((e) => `${engineLabel(e.engine)} ${percent(e.successRate)} of ${e.runs} runs`).join("; ") + "."
            : "No engine ran in this period."
        }
        empty={engines.length === 0 ? "No engine ran in this period yet." : null}
        height={Math.max(140, engines.length * 34 + 50)}
        table={{
          head: ["Engine", "Runs", "Identified", "No match", "Failed", "Success rate"],
          rows: engines.map((e) => [engineLabel(e.engine), e.runs, e.identified, e.noMatch, e.failed, percent(e.successRate)]),
        }}
        config={(c) => ({
          type: "bar",
          data: {
            labels: engines.map((e) => engineLabel(e.engine)),
            datasets: [{ label: "Success rate (%)", data: engines.map((e) => Math.round(e.successRate * 100)), backgroundColor: c.green, borderRadius: 4 }],
          },
          options: {
            ...baseOptions,
            indexAxis: "y",
            plugins: { legend: { display: false }, tooltip: { callbacks: { label: (ctx) => `${ctx.parsed.x}% identified` } } },
            scales: (() => {
              const a = axes(c, true, 100);
              return { ...a, x: { ...a.x, ticks: { ...a.x.ticks, callback: (v: string | number) => `${v}%` } } };
            })(),
          },
        })}
      />

      <ChartFigure
        id="engine-latency"
        title="Engine latency"
        summary={
          engines.length
            ? engines.map((e) => `${engineLabel(e.engine)} median ${formatMs(e.medianMs)}, 95th percentile ${formatMs(e.p95Ms)}`).join("; ") + "."
            : "No engine ran in this period."
        }
        empty={engines.length === 0 ? "No engine ran in this period yet." : null}
        height={Math.max(160, engines.length * 44 + 60)}
        table={{
          head: ["Engine", "Median", "95th percentile"],
          rows: engines.map((e) => [engineLabel(e.engine), formatMs(e.medianMs), formatMs(e.p95Ms)]),
        }}
        config={(c) => ({
          type: "bar",
          data: {
            labels: engines.map((e) => engineLabel(e.engine)),
            datasets: [
              { label: "Median (ms)", data: engines.map((e) => e.medianMs), backgroundColor: c.blue, borderRadius: 4 },
              { label: "95th percentile (ms)", data: engines.map((e) => e.p95Ms), backgroundColor: c.violet, borderRadius: 4 },
            ],
          },
          options: {
            ...baseOptions,
            indexAxis: "y",
            plugins: { legend: { position: "bottom", labels: { color: c.text, boxWidth: 12 } } },
            scales: axes(c, true),
          },
        })}
      />

      <figure className="insight-figure insight-conversion" aria-labelledby="conversion-title" data-chart="conversion">
        <figcaption id="conversion-title" className="insight-figure-title">
          Guest to account
        </figcaption>
        <p className="insight-big">
          <strong>{percent(conv.rate)}</strong>{" "}
          <span>
            of guests who identified a scene then created an account ({conv.signUpsAfterGuest} of {conv.guestIdentifications})
          </span>
        </p>
        <dl className="insight-funnel">
          {[
            ["Guests who identified a scene", conv.guestIdentifications],
            ["Guests stopped at the free limit", conv.guestLimitReached],
            ["Accounts created after a guest identification", conv.signUpsAfterGuest],
            ["All accounts created", conv.signUps],
          ].map(([label, n]) => {
            const max = Math.max(1, conv.guestIdentifications, conv.signUps, conv.guestLimitReached);
            return (
              <div key={label as string} className="insight-funnel-row">
                <dt>{label}</dt>
                <dd>
                  <span className="insight-funnel-bar" style={{ width: `${Math.round(((n as number) / max) * 100)}%` }} aria-hidden="true" />
                  <span className="insight-funnel-value">{n}</span>
                </dd>
              </div>
            );
          })}
        </dl>
      </figure>

      <MemoryCharts data={data} kit={{ ChartFigure, axes, baseOptions, shortDay, engineLabel, percent } as unknown as ChartKit} />

      {countChart("top-titles", "Top identified titles", data.topTitles, "Title", "identifications", "primary", "No titles identified in this period yet.")}
      {countChart("top-pages", "Top pages", data.topPages, "Page", "views", "blue", "No page views in this period yet.")}
      {countChart(
        "top-referrers",
        "Top referrers",
        data.topReferrers,
        "Referring site",
        "views",
        "violet",
        data.directPageViews
          ? `No other site sent visitors in this period; all ${data.directPageViews} page views were direct or from within the site.`
          : "No referring sites in this period yet.",
      )}
      <p className="muted insight-foot">
        Direct or from within the site: {data.directPageViews} page views. Events are kept {data.retentionDays} days.
      </p>
    </div>
  );
}
