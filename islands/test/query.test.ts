import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ApiError } from "../src/lib/api";
import {
  createQueryClient,
  currentUserQuery,
  fetchCurrentUser,
  modelsQuery,
  retryDelay,
  settingsQuery,
  shouldRetryMutation,
  shouldRetryQuery,
} from "../src/lib/query";

const err = (status: number) => new ApiError(status, "", "x");

describe("query client defaults (SPEC section 9)", () => {
  it("keeps data fresh 5 min, cached 10 min, no refetch on focus, no polling", () => {
    const q = createQueryClient().getDefaultOptions().queries!;
    expect(q.staleTime).toBe(5 * 60_000);
    expect(q.gcTime).toBe(10 * 60_000);
    expect(q.refetchOnWindowFocus).toBe(false);
    expect(q.refetchInterval).toBe(false);
  });

  it("backs off exponentially from 1 s, capped at 30 s", () => {
    expect([0, 1, 2, 3, 4, 5, 6].map(retryDelay)).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000]);
  });

  it("retries queries while fewer than 2 failures, never on a 4xx except 408 and 429", () => {
    expect(shouldRetryQuery(0, err(500))).toBe(true);
    expect(shouldRetryQuery(1, new TypeError("Failed to fetch"))).toBe(true);
    expect(shouldRetryQuery(2, err(500))).toBe(false);
    for (const s of [400, 401, 403, 404, 422]) expect(shouldRetryQuery(0, err(s))).toBe(false);
    expect(shouldRetryQuery(0, err(408))).toBe(true);
    expect(shouldRetryQuery(0, err(429))).toBe(true);
    expect(shouldRetryQuery(0, new Error("404: gone"))).toBe(false);
  });

  it("retries mutations at most once and never on any 4xx", () => {
    expect(shouldRetryMutation(0, err(503))).toBe(true);
    expect(shouldRetryMutation(1, err(503))).toBe(false);
    for (const s of [400, 408, 429]) expect(shouldRetryMutation(0, err(s))).toBe(false);
  });

  it("has the per-query timings: settings 10 s with refetch on mount and focus, models 30 s, user 5 min without retry", () => {
    expect(settingsQuery.staleTime).toBe(10_000);
    expect(settingsQuery.refetchOnMount).toBe(true);
    expect(settingsQuery.refetchOnWindowFocus).toBe(true);
    expect(settingsQuery.retry(1, err(500))).toBe(true);
    expect(settingsQuery.retry(2, err(500))).toBe(false);
    expect(modelsQuery.staleTime).toBe(30_000);
    expect(currentUserQuery.staleTime).toBe(5 * 60_000);
    expect(currentUserQuery.gcTime).toBe(10 * 60_000);
    expect(currentUserQuery.retry).toBe(false);
  });
});

describe("query client behaviour", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  /** Runs a failing query to the end; returns when each attempt started (ms after the first). */
  async function attemptsFor(error: Error): Promise<{ calls: number; at: number[] }> {
    const client = createQueryClient();
    const times: number[] = [];
    const fn = vi.fn(async () => {
      times.push(Date.now());
      throw error;
    });
    const done = client.fetchQuery({ queryKey: ["x"], queryFn: fn }).catch(() => undefined);
    await vi.runAllTimersAsync();
    await done;
    return { calls: fn.mock.calls.length, at: times.map((t) => t - times[0]!) };
  }

  it("makes 3 attempts on a 500, waiting 1 s then 2 s", async () => {
    expect(await attemptsFor(err(500))).toEqual({ calls: 3, at: [0, 1000, 3000] });
  });

  it("makes 1 attempt on a 404 and 3 on a 429", async () => {
    expect((await attemptsFor(err(404))).calls).toBe(1);
    expect((await attemptsFor(err(429))).calls).toBe(3);
  });

  it("retries a failed mutation once, and a 4xx mutation not at all", async () => {
    const client = createQueryClient();
    for (const [error, expected] of [[err(502), 2], [err(409), 1]] as const) {
      const fn = vi.fn().mockRejectedValue(error);
      const run = client.getMutationCache().build(client, { mutationFn: fn }).execute(undefined).catch(() => undefined);
      await vi.runAllTimersAsync();
      await run;
      expect(fn).toHaveBeenCalledTimes(expected);
    }
  });
});

describe("current user", () => {
  afterEach(() => vi.unstubAllGlobals());

  it("is null on 401 and on network failure, the user otherwise", async () => {
    vi.stubGlobal("fetch", vi.fn().mockResolvedValueOnce(new Response("", { status: 401 })));
    expect(await fetchCurrentUser()).toBeNull();
    vi.stubGlobal("fetch", vi.fn().mockRejectedValueOnce(new TypeError("Failed to fetch")));
    expect(await fetchCurrentUser()).toBeNull();
    vi.stubGlobal("fetch", vi.fn().mockResolvedValueOnce(new Response('{"id":1,"username":"ann","email":"a@x"}')));
    expect(await fetchCurrentUser()).toMatchObject({ username: "ann" });
  });
});
