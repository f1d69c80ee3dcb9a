/**
 * The identification calls (SPEC section 7): the upload (XMLHttpRequest, for upload
 * progress), shared results, analytics events, collections and reviews.
 */
import { ApiError, getJson, postJson, statusOf } from "../lib/api";
import { IdentifyNetworkError, IdentifyTimeoutError } from "./errors";
import { unwrapResult, type IdentificationResult } from "./result";

export interface UploadOptions {
  file: File;
  mode: string;
  useAudioAnalysis: boolean;
  /** Aborting cancels the upload (the promise rejects with an AbortError DOMException). */
  signal?: AbortSignal;
  timeoutMs: number;
  /** Bytes sent and total, while the request body goes up. */
  onProgress?: (loaded: number, total: number) => void;
  /** Called once the whole body is sent (the server is now working). */
  onUploaded?: () => void;
}

/** `POST /api/identify` as multipart: file, mode, useAudioAnalysis, useEnhancedAnalysis. */
export function uploadIdentify(opts: UploadOptions): Promise<IdentificationResult> {
  return new Promise((resolve, reject) => {
    if (opts.signal?.aborted) {
      reject(new DOMException("The identification was cancelled.", "AbortError"));
      return;
    }
    const form = new FormData();
    form.append("file", opts.file, opts.file.name);
    form.append("mode", opts.mode);
    form.append("useAudioAnalysis", String(opts.useAudioAnalysis));
    form.append("useEnhancedAnalysis", "true");

    const xhr = new XMLHttpRequest();
    xhr.open("POST", "/api/identify");
    xhr.withCredentials = true;
    xhr.setRequestHeader("Accept", "application/json");
    xhr.timeout = opts.timeoutMs;
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable) opts.onProgress?.(e.loaded, e.total);
    };
    xhr.upload.onload = () => opts.onUploaded?.();
    const onAbort = () => xhr.abort();
    opts.signal?.addEventListener("abort", onAbort, { once: true });
    const done = () => opts.signal?.removeEventListener("abort", onAbort);

    xhr.onload = () => {
      done();
      const text = xhr.responseText ?? "";
      if (xhr.status < 200 || xhr.status >= 300) {
        reject(new ApiError(xhr.status, xhr.statusText, text));
        return;
      }
      try {
        const result = unwrapResult(JSON.parse(text));
        resolve(result);
        // pwa/client.ts: the notification prompt follows a first identification, and the
        // service worker keeps the result's pictures for offline viewing.
        window.dispatchEvent(new CustomEvent("reelfind:identified", { detail: result }));
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    };
    xhr.onerror = () => {
      done();
      reject(new IdentifyNetworkError());
    };
    xhr.ontimeout = () => {
      done();
      reject(new IdentifyTimeoutError(Math.round(opts.timeoutMs / 1000)));
    };
    xhr.onabort = () => {
      done();
      reject(new DOMException("The identification was cancelled.", "AbortError"));
    };
    xhr.send(form);
  });
}

export const SHARED_GONE = "This shared identification link is no longer available";
export const SHARED_FAILED = "Unable to load shared identification";

/**
 * `GET /api/identification/{id}` for `/?id=`: 404 gives the "no longer available" text;
 * another error the server's message or "Server error: {status}"; no answer at all
 * "Unable to load shared identification".
 */
export async function fetchSharedIdentification(id: string, signal?: AbortSignal): Promise<IdentificationResult> {
  try {
    return unwrapResult(await getJson<unknown>(`/api/identification/${encodeURIComponent(id)}`, { signal }));
  } catch (error) {
    if (error instanceof DOMException && error.name === "AbortError") throw error;
    if (error instanceof ApiError) {
      if (error.status === 404) throw new Error(SHARED_GONE);
      const body = error.json<{ message?: unknown; error?: unknown }>();
      const msg = typeof body?.message === "string" ? body.message : typeof body?.error === "string" ? body.error : null;
      throw new Error(msg || `Server error: ${error.status}`);
    }
    throw new Error(SHARED_FAILED);
  }
}

/** `POST /api/analytics/track`; failures are ignored (SPEC section 7). */
export function track(action: string, resourceId: string | null, extra: Record<string, unknown> = {}): void {
  const body = {
    action,
    resourceType: "identification",
    resourceId,
    metadata: {
      userAgent: navigator.userAgent,
      path: location.pathname,
      timestamp: new Date().toISOString(),
      ...extra,
    },
  };
  void postJson("/api/analytics/track", body).catch(() => undefined);
}

export type CollectionOutcome = "added" | "signin" | "failed";

/** `POST /api/collections/items` {title, year, posterUrl, tmdbId}. */
export async function addToCollection(r: IdentificationResult): Promise<CollectionOutcome> {
  const tmdbId = typeof r.tmdbId === "number" ? r.tmdbId : typeof r.id === "number" ? r.id : null;
  try {
    await postJson("/api/collections/items", {
      title: r.title ?? "",
      year: r.year ?? null,
      posterUrl: r.posterUrl ?? null,
      tmdbId,
    });
    return "added";
  } catch (error) {
    return statusOf(error) === 401 ? "signin" : "failed";
  }
}

/** `POST /api/testimonials` {rating, review, movieTitle, identificationId}. */
export async function submitReview(input: {
  rating: number;
  review: string;
  movieTitle?: string | null;
  identificationId?: string | null;
}): Promise<void> {
  await postJson("/api/testimonials", input);
}
