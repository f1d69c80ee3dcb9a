import { afterEach, describe, expect, it, vi } from "vitest";
import { ApiError, apiRequest, getJson, isRetryable, postJson, RETRY_DELAYS_MS, statusOf, withRetry } from "../src/lib/api";

function mockFetch(...responses: Array<Response | Error>) {
  const fn = vi.fn<typeof fetch>();
  for (const r of responses) {
    if (r instanceof Error) fn.mockRejectedValueOnce(r);
    else fn.mockResolvedValueOnce(r);
  }
  vi.stubGlobal("fetch", fn);
  return fn;
}

afterEach(() => vi.unstubAllGlobals());

describe("api client", () => {
  it("sends credentials and JSON, and parses the JSON answer", async () => {
    const fetchMock = mockFetch(new Response(JSON.stringify({ ok: 1 }), { status: 200 }));
    const body = await postJson<{ ok: number }>("/api/login", { username: "ann", password: "secret" });
    expect(body).toEqual({ ok: 1 });
    const [url, init] = fetchMock.mock.calls[0]!;
    expect(url).toBe("/api/login");
    expect(init?.credentials).toBe("include");
    expect(init?.method).toBe("POST");
    expect(new Headers(init?.headers).get("Content-Type")).toBe("application/json");
    expect(init?.body).toBe('{"username":"ann","password":"secret"}');
  });

  it("throws '{status}: {text}' on a non-OK reply", async () => {
    mockFetch(new Response('{"error":"Invalid username or password"}', { status: 401, statusText: "Unauthorized" }));
    const err = await getJson("/api/user").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).message).toBe('401: {"error":"Invalid username or password"}');
    expect((err as ApiError).status).toBe(401);
    expect((err as ApiError).json()).toEqual({ error: "Invalid username or password" });
  });

  it("falls back to the status text when the body is empty", async () => {
    mockFetch(new Response("", { status: 503, statusText: "Service Unavailable" }));
    await expect(apiRequest("GET", "/api/settings")).rejects.toThrow(/^503: Service Unavailable$/);
  });

  it("passes FormData through without a JSON content type", async () => {
    const fetchMock = mockFetch(new Response("{}", { status: 200 }));
    const form = new FormData();
    form.set("mode", "auto");
    await apiRequest("POST", "/api/identify", form);
    const init = fetchMock.mock.calls[0]![1]!;
    expect(init.body).toBe(form);
    expect(new Headers(init.headers).has("Content-Type")).toBe(false);
  });

  it("reads the status from ApiErrors and from 'NNN: ...' messages", () => {
    expect(statusOf(new ApiError(404, "Not Found", ""))).toBe(404);
    expect(statusOf(new Error("429: slow down"))).toBe(429);
    expect(statusOf(new Error("Failed to fetch"))).toBeNull();
  });
});

describe("withRetry (SPEC 9: up to 3 attempts, waits 2 s, 4 s, 8 s)", () => {
  it("retries a failing call with the documented waits and then gives up", async () => {
    const sleeps: number[] = [];
    const fn = vi.fn().mockRejectedValue(new Error("500: boom"));
    await expect(withRetry(fn, { sleep: async (ms) => void sleeps.push(ms) })).rejects.toThrow("500: boom");
    expect(fn).toHaveBeenCalledTimes(3);
    expect(sleeps).toEqual([2000, 4000]);
    expect(RETRY_DELAYS_MS).toEqual([2000, 4000, 8000]);
  });

  it("waits 8 s before a fourth attempt when more attempts are asked for", async () => {
    const sleeps: number[] = [];
    const fn = vi.fn().mockRejectedValue(new TypeError("Failed to fetch"));
    await expect(withRetry(fn, { attempts: 4, sleep: async (ms) => void sleeps.push(ms) })).rejects.toThrow();
    expect(sleeps).toEqual([2000, 4000, 8000]);
  });

  it("returns the first success", async () => {
    const fn = vi.fn().mockRejectedValueOnce(new Error("503: busy")).mockResolvedValueOnce("ok");
    await expect(withRetry(fn, { sleep: async () => {} })).resolves.toBe("ok");
    expect(fn).toHaveBeenCalledTimes(2);
  });

  it("does not retry a 4xx other than 408 and 429", async () => {
    const fn = vi.fn().mockRejectedValue(new ApiError(404, "Not Found", ""));
    await expect(withRetry(fn, { sleep: async () => {} })).rejects.toThrow("404: Not Found");
    expect(fn).toHaveBeenCalledTimes(1);
    expect(isRetryable(new ApiError(408, "", ""))).toBe(true);
    expect(isRetryable(new ApiError(429, "", ""))).toBe(true);
    expect(isRetryable(new ApiError(400, "", ""))).toBe(false);
  });
});
