/**
 * `/test`: the production checks of SPEC section 2, run from the visitor's browser. No props.
 *
 * - API connectivity: one button asks `/healthz` (the server and its database) and
 *   `/api/settings` (the JSON API every island reads; SPEC 7 names it the health test) and
 *   shows each answer's status and round-trip time. Nothing is cached, so a stale service
 *   worker or HTTP cache cannot make a dead server look alive.
 * - Interactivity: one button that counts its own clicks and shows a toast, which proves
 *   that the runtime mounted React, that state updates render and that the shared toast
 *   viewport works; beside it, what this browser allows (cookies, storage, service worker).
 *
 * templates/pages/test.html renders this first view as the server HTML (test/island-skeletons
 * checks that its words are these), so mounting moves nothing on the page.
 */
import { useState } from "react";
import { useToast } from "../lib/useToast";
import type { TestPageProps } from "../generated/TestPageProps";

interface Check {
  id: string;
  label: string;
  url: string;
  /** Reads a short, human detail from a successful answer. */
  describe: (res: Response) => Promise<string>;
}

export const API_CHECKS: readonly Check[] = [
  {
    id: "health",
    label: "Server and database",
    url: "/healthz",
    describe: async (res) => ((await res.text()).trim() === "ok" ? "Healthy" : "Answered"),
  },
  {
    id: "settings",
    label: "Settings API",
    url: "/api/settings",
    describe: async (res) => {
      const body = (await res.json()) as { site_name?: unknown };
      return typeof body.site_name === "string" ? `Site name: ${body.site_name}` : "Answered";
    },
  },
];

type Outcome =
  | { state: "running" }
  | { state: "ok"; status: number; ms: number; detail: string }
  | { state: "failed"; status: number | null; ms: number; detail: string };

async function runCheck(check: Check): Promise<Outcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  try {
    const res = await fetch(check.url, { cache: "no-store", credentials: "include", headers: { Accept: "application/json" } });
    if (!res.ok) return { state: "failed", status: res.status, ms: elapsed(), detail: res.statusText || "Error" };
    const detail = await check.describe(res);
    return { state: "ok", status: res.status, ms: elapsed(), detail };
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    return { state: "failed", status: null, ms: elapsed(), detail: detail || "Network error" };
  }
}

function OutcomeText({ outcome }: { outcome: Outcome | undefined }) {
  if (!outcome) return <span className="pwa-muted">Not run yet</span>;
  if (outcome.state === "running") return <span className="pwa-status pwa-status-installing">Checking…</span>;
  const ok = outcome.state === "ok";
  return (
    <>
      <span className={`pwa-status ${ok ? "pwa-status-active" : "pwa-status-error"}`}>{ok ? "OK" : "Failed"}</span>
      <span className="pwa-muted">
        {outcome.status !== null ? `HTTP ${outcome.status}, ` : ""}
        {outcome.ms} ms. {outcome.detail}
      </span>
    </>
  );
}

function ApiCard() {
  const [outcomes, setOutcomes] = useState<Record<string, Outcome>>({});
  const running = Object.values(outcomes).some((o) => o.state === "running");

  const run = async () => {
    setOutcomes(Object.fromEntries(API_CHECKS.map((c) => [c.id, { state: "running" } as Outcome])));
    // One after the other, so each time measures one request, not two competing ones.
    for (const check of API_CHECKS) {
      const outcome = await runCheck(check);
      setOutcomes((prev) => ({ ...prev, [check.id]: outcome }));
    }
  };

  return (
    <section className="card pwa-settings-card" aria-labelledby="test-api-title" aria-busy={running}>
      <h2 id="test-api-title" className="h4">
        API connectivity
      </h2>
      <dl className="pwa-facts" aria-live="polite">
        {API_CHECKS.map((check) => (
          <div key={check.id} data-check={check.id} data-outcome={outcomes[check.id]?.state ?? "idle"}>
            <dt>
              {check.label} <code>{check.url}</code>
            </dt>
            <dd>
              <OutcomeText outcome={outcomes[check.id]} />
            </dd>
          </div>
        ))}
      </dl>
      <div className="pwa-actions">
        <button type="button" className="btn btn-primary" onClick={() => void run()} disabled={running}>
          {running ? "Testing…" : "Test API Connection"}
        </button>
      </div>
    </section>
  );
}

function storageWorks(): boolean {
  try {
    const key = "reelfind-test-page";
    window.localStorage.setItem(key, "1");
    window.localStorage.removeItem(key);
    return true;
  } catch {
    return false;
  }
}

/** What this browser allows, as the interactivity card lists it. */
export const BROWSER_FACTS: readonly (readonly [string, () => boolean])[] = [
  ["Cookies", () => navigator.cookieEnabled],
  ["Local storage", storageWorks],
  ["Service worker", () => "serviceWorker" in navigator],
  ["Online", () => navigator.onLine],
];

export const INTERACTIVITY_HINT = "Press the button: its count and a notice should appear.";

function InteractivityCard() {
  const { toast } = useToast();
  const [clicks, setClicks] = useState(0);
  const facts = BROWSER_FACTS.map(([label, test]) => [label, test()] as const);

  const click = () => {
    const next = clicks + 1;
    setClicks(next);
    toast({ title: "Interactivity works", description: `The button responded (${next} ${next === 1 ? "click" : "clicks"}).` });
  };

  return (
    <section className="card pwa-settings-card" aria-labelledby="test-ui-title">
      <h2 id="test-ui-title" className="h4">
        Interactivity
      </h2>
      <dl className="pwa-facts">
        <div>
          <dt>JavaScript</dt>
          <dd>
            <span className="pwa-status pwa-status-active">On</span>
          </dd>
        </div>
        {facts.map(([label, on]) => (
          <div key={label}>
            <dt>{label}</dt>
            <dd>
              <span className={`pwa-status ${on ? "pwa-status-active" : "pwa-status-error"}`}>{on ? "Available" : "Unavailable"}</span>
            </dd>
          </div>
        ))}
      </dl>
      <div className="pwa-actions">
        <button type="button" className="btn btn-primary" onClick={click}>
          Test Interactivity
        </button>
      </div>
      <p className="pwa-hint" role="status" data-clicks={clicks}>
        {clicks === 0 ? INTERACTIVITY_HINT : `Working: ${clicks} ${clicks === 1 ? "click" : "clicks"} handled.`}
      </p>
    </section>
  );
}

export default function TestPage(_props: TestPageProps) {
  return (
    <div className="pwa-settings">
      <ApiCard />
      <InteractivityCard />
    </div>
  );
}
