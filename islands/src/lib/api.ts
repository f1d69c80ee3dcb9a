/**
 * The API client every island uses (SPEC section 7). Every call sends the session cookie
 * (`credentials: "include"`); a non-OK reply throws an {@link ApiError} whose message is
 * `"{status}: {response text or status text}"`, the format the rest of the client (error
 * messages, retry rules) reads.
 */

export class ApiError extends Error {
  readonly status: number;
  /** The raw response text (often a JSON `{error, message}` body). */
  readonly body: string;

  constructor(status: number, statusText: string, body: string) {
    super(`${status}: ${body || statusText}`);
    this.name = "ApiError";
    this.status = status;
    this.body = body;
  }

  /** The body parsed as JSON, or null when it is not JSON. */
  json<T = Record<string, unknown>>(): T | null {
    try {
      return JSON.parse(this.body) as T;
    } catch {
      return null;
    }
  }
}

/** The HTTP status an error carries: an ApiError's, or one read from a "NNN: ..." message. */
export function statusOf(error: unknown): number | null {
  if (error instanceof ApiError) return error.status;
  if (error instanceof Error) {
    const m = /^(\d{3}):/.exec(error.message);
    if (m) return Number(m[1]);
  }
  return null;
}

/** Throws an ApiError when the response is not OK; returns it unchanged otherwise. */
export async function throwIfNotOk(res: Response): Promise<Response> {
  if (!res.ok) {
    let text = "";
    try {
      text = await res.text();
    } catch {
      /* body unreadable: fall back to the status text */
    }
    throw new ApiError(res.status, res.statusText, text);
  }
  return res;
}

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/**
 * Sends a request. A plain object body is sent as JSON; FormData, Blob, strings and
 * URLSearchParams are passed through as they are.
 */
export async function apiRequest(method: Method, url: string, body?: unknown, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (!headers.has("Accept")) headers.set("Accept", "application/json");
  let payload: BodyInit | undefined;
  if (body === undefined || body === null) {
    payload = undefined;
  } else if (
    body instanceof FormData ||
    body instanceof Blob ||
    body instanceof URLSearchParams ||
    typeof body === "string"
  ) {
    payload = body;
  } else {
    headers.set("Content-Type", "application/json");
    payload = JSON.stringify(body);
  }
  const res = await fetch(url, { ...init, method, headers, body: payload, credentials: "include" });
  return throwIfNotOk(res);
}

/** Reads a JSON body; an empty body (204) gives `undefined`. */
export async function readJson<T>(res: Response): Promise<T> {
  const text = await res.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

export async function getJson<T>(url: string, init?: RequestInit): Promise<T> {
  return readJson<T>(await apiRequest("GET", url, undefined, init));
}

export async function postJson<T>(url: string, body?: unknown, init?: RequestInit): Promise<T> {
  return readJson<T>(await apiRequest("POST", url, body, init));
}

export async function putJson<T>(url: string, body?: unknown, init?: RequestInit): Promise<T> {
  return readJson<T>(await apiRequest("PUT", url, body, init));
}

export async function deleteJson<T>(url: string, init?: RequestInit): Promise<T> {
  return readJson<T>(await apiRequest("DELETE", url, undefined, init));
}

/** Waits of the retry helper (SPEC section 9): 2 s, 4 s, 8 s. */
export const RETRY_DELAYS_MS = [2000, 4000, 8000] as const;

/** Whether an error is worth retrying: network failures, 5xx, 408 and 429 are; other 4xx are not. */
export function isRetryable(error: unknown): boolean {
  if (error instanceof DOMException && error.name === "AbortError") return false;
  const status = statusOf(error);
  if (status === null) return true;
  if (status === 408 || status === 429) return true;
  return status >= 500;
}

export interface RetryOptions {
  /** How many attempts in all (SPEC: up to 3). */
  attempts?: number;
  /** Wait before attempt n+1 is delays[n-1]; default 2 s, 4 s, 8 s. */
  delays?: readonly number[];
  /** Injected in tests. */
  sleep?: (ms: number) => Promise<void>;
  shouldRetry?: (error: unknown) => boolean;
}

const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * The API retry helper of SPEC section 9: runs `fn` up to 3 times, waiting 2 s and then
 * 4 s between attempts (the schedule doubles from 2 s, so a fourth attempt, if asked for,
 * waits 8 s). Errors that a retry cannot fix (4xx other than 408/429, aborts) are thrown
 * at once.
 */
export async function withRetry<T>(fn: () => Promise<T>, opts: RetryOptions = {}): Promise<T> {
  const attempts = opts.attempts ?? 3;
  const delays = opts.delays ?? RETRY_DELAYS_MS;
  const sleep = opts.sleep ?? defaultSleep;
  const shouldRetry = opts.shouldRetry ?? isRetryable;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (error) {
      if (attempt >= attempts || !shouldRetry(error)) throw error;
      const wait = delays[Math.min(attempt - 1, delays.length - 1)] ?? 0;
      await sleep(wait);
    }
  }
}
