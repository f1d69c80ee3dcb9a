/**
 * A fake `fetch` for island tests: answers by "METHOD /path" (query ignored), 404 otherwise.
 * Returns the mock, so a test can read what was sent.
 */
import { vi } from "vitest";

export type Handler = (init?: RequestInit) => Response;

export function routeFetch(routes: Record<string, Handler>) {
  const fn = vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    const key = `${init?.method ?? "GET"} ${new URL(url, "http://localhost").pathname}`;
    const make = routes[key];
    return make ? make(init) : new Response("not found", { status: 404 });
  });
  vi.stubGlobal("fetch", fn);
  return fn;
}

/** A handler answering `body` as JSON with `status`. */
export const json = (body: unknown, status = 200) => () =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
