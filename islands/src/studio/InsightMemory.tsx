/**
 * The Insight tab's answer-memory and feedback charts (issue 41): what people said of each
 * engine's answers ("Was this right?"), how many identifications the memory answered, and
 * the engine calls (and their estimated price) it saved, per day. Drawn with the Insight
 * island's own chart figure, passed in as `kit` (this file is part of that island's chunk).
 */
import type { ChartConfiguration } from "chart.js";
import type { ReactElement } from "react";
import type { Insight } from "../generated/Insight";

type Colours = Record<"primary" | "blue" | "coral" | "green" | "violet" | "text" | "grid", string>;

export interface ChartKit {
  ChartFigure: (props: {
    id: string;
    title: string;
    summary: string;
    config: (colours: Colours) => ChartConfiguration;
    table: { head: string[]; rows: (string | number)[][] };
    empty?: string | null;
    height?: number;
  }) => ReactElement;
  axes: (colours: Colours, horizontal?: boolean, max?: number) => Record<string, Record<string, unknown>>;
  baseOptions: Record<string, unknown>;
  shortDay: (day: string) => string;
  engineLabel: (id: string) => string;
  percent: (x: number) => string;
}

/** US dollars: whole dollars from 10, cents from 1, and the fractions of a cent a few calls save. */
export function usd(x: number): string {
  if (x >= 10) return `$${Math.round(x).toLocaleString("en-US")}`;
  if (x >= 1 || x === 0) return `$${x.toFixed(2)}`;
  return `$${x.toFixed(4)}`;
}

export function MemoryCharts({ data, kit }: { data: Insight; kit: ChartKit }) {
  const { ChartFigure, axes, baseOptions, shortDay, engineLabel, percent } = kit;
  const m = data.memory;
  const fb = data.feedback;
  const days = m.daily.map((d) => shortDay(d.day));
  return (
    <>
      <ChartFigure
        id="engine-feedback"
        title="Was this right? per engine"
        summary={
          fb.length
            ? fb.map((e) => `${engineLabel(e.engine)}: ${percent(e.confirmedRate)} confirmed, ${percent(e.correctedRate)} said wrong, of ${e.confirmed + e.corrected} answers`).join("; ") + "."
            : "Nobody answered Was this right? in this period."
        }
        empty={fb.length === 0 ? "Nobody answered \u201cWas this right?\u201d in this period yet." : null}
        height={Math.max(150, fb.length * 40 + 60)}
        table={{
          head: ["Engine", "Confirmed", "Said wrong", "Confirmed rate", "Corrected rate"],
          rows: fb.map((e) => [engineLabel(e.engine), e.confirmed, e.corrected, percent(e.confirmedRate), percent(e.correctedRate)]),
        }}
        config={(c) => ({
          type: "bar",
          data: {
            labels: fb.map((e) => engineLabel(e.engine)),
            datasets: [
              { label: "Confirmed (%)", data: fb.map((e) => Math.round(e.confirmedRate * 100)), backgroundColor: c.green, borderRadius: 4 },
              { label: "Said wrong (%)", data: fb.map((e) => Math.round(e.correctedRate * 100)), backgroundColor: c.coral, borderRadius: 4 },
            ],
          },
          options: {
            ...baseOptions,
            indexAxis: "y",
            plugins: { legend: { position: "bottom", labels: { color: c.text, boxWidth: 12 } } },
            scales: (() => {
              const a = axes(c, true, 100);
              return { x: { ...a.x, stacked: true }, y: { ...a.y, stacked: true } };
            })(),
          },
        })}
      />

      <ChartFigure
        id="memory-answers"
        title="Answered from memory per day"
        summary={`${m.answered} of ${data.totals.identified} identifications (${percent(m.hitRate)}) were answered from memory in this period; ${m.remembered} answers are remembered in all.`}
        empty={data.totals.identified === 0 ? "No identifications in this period yet." : null}
        table={{
          head: ["Day", "From memory", "Identified", "Hit rate"],
          rows: m.daily.map((d) => [d.day, d.answered, d.identified, d.identified ? percent(d.answered / d.identified) : "0%"]),
        }}
        config={(c) => ({
          type: "bar",
          data: {
            labels: days,
            datasets: [
              { label: "From memory", data: m.daily.map((d) => d.answered), backgroundColor: c.violet, borderRadius: 3 },
              { label: "Other identifications", data: m.daily.map((d) => Math.max(0, d.identified - d.answered)), backgroundColor: c.blue, borderRadius: 3 },
            ],
          },
          options: {
            ...baseOptions,
            plugins: { legend: { position: "bottom", labels: { color: c.text, boxWidth: 12 } } },
            scales: (() => {
              const a = axes(c);
              return { x: { ...a.x, stacked: true }, y: { ...a.y, stacked: true } };
            })(),
          },
        })}
      />

      <ChartFigure
        id="memory-savings"
        title="Engine calls saved by memory"
        summary={`The memory saved ${m.callsSaved} engine calls in this period, an estimated ${usd(m.savedUsd)}.`}
        empty={m.callsSaved === 0 ? "No engine call was saved in this period yet." : null}
        table={{ head: ["Day", "Calls saved", "Estimated saving"], rows: m.daily.map((d) => [d.day, d.answered, usd(d.savedUsd)]) }}
        config={(c) => ({
          type: "line",
          data: {
            labels: days,
            datasets: [
              { label: "Estimated saving (USD)", data: m.daily.map((d) => Number(d.savedUsd.toFixed(4))), borderColor: c.green, backgroundColor: c.green, tension: 0.25 },
            ],
          },
          options: {
            ...baseOptions,
            plugins: { legend: { display: false }, tooltip: { callbacks: { label: (ctx) => usd(Number(ctx.parsed.y)) } } },
            scales: (() => {
              const a = axes(c);
              const y = a.y ?? {};
              return { ...a, y: { ...y, ticks: { ...(y.ticks as object), precision: 4, callback: (v: string | number) => usd(Number(v)) } } };
            })(),
          },
        })}
      />
    </>
  );
}
