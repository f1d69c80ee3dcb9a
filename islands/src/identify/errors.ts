/**
 * What a failed identification says (SPEC section 8 "Identify") and which error view it
 * gets (titles and advice in lib/errors.ts, by the classification of SPEC section 5: the
 * server's error code, else the text).
 */
import { ApiError } from "../lib/api";
import { classifyError, errorCode, FALLBACK_MAX_MB, uploadErrorView, type ErrorKind } from "../lib/errors";

/** An administrator is signed in (the server marks the header: templates/partials/header.html). */
export function viewerIsAdmin(): boolean {
  return typeof document !== "undefined" && document.querySelector("[data-header][data-user-admin]") !== null;
}

export const MSG = {
  tooLarge: (maxMb: number) => `File too large. Maximum size: ${maxMb}MB.`,
  invalidFormat:
    "Invalid file format. Please upload an image (JPEG, PNG, GIF) or video (MP4, MOV, AVI, WebM) file.",
  timedOut: "Upload timed out. Please try a smaller file or check your connection.",
  clientTimeout: (secs: number) => `The identification timed out after ${secs} seconds.`,
  tooMany: "Too many requests. Please wait a moment before trying again.",
  unavailable: "Server temporarily unavailable. Please try again in a few minutes.",
  generic: "Failed to identify the scene. Please try again.",
  network: "Network error. Please check your connection and try again.",
} as const;

/** The hint appended to a message, by error kind. */
export const HINTS: Record<ErrorKind, string> = {
  timeout: "Tip: shorter clips and smaller images are analysed faster.",
  format: "Tip: screenshots saved as JPEG or PNG work best.",
  size: "Tip: compress the file or trim the clip.",
  network: "Tip: check that you are online, then try again.",
  other: "Tip: a clear frame with faces or a famous scene works best.",
};

export interface IdentifyFailure {
  /** What the person reads (message plus hint). */
  message: string;
  /** The message without the hint, and the hint on its own (the view shows them apart). */
  base: string;
  hint: string;
  kind: ErrorKind;
  title: string;
  advice: string[];
  /** The raw error for "Technical details (for support)". */
  raw: string;
  /** A guest who used the free identification (403 requiresAuth). */
  requiresAuth: boolean;
  /** Seconds the server asked us to wait before trying again (429/503), 0 when it did not. */
  retryAfter: number;
}

/** The wait a 429 or 503 asked for (`retryAfter` in its body), bounded to an hour. */
export function retryAfterOf(error: unknown): number {
  if (!(error instanceof ApiError) || (error.status !== 429 && error.status !== 503)) return 0;
  const secs = error.json<{ retryAfter?: unknown }>()?.retryAfter;
  return typeof secs === "number" && Number.isFinite(secs) && secs > 0 ? Math.min(Math.ceil(secs), 3600) : 0;
}

/** Client-side timeout (the XHR's own deadline passed). */
export class IdentifyTimeoutError extends Error {
  constructor(readonly seconds: number) {
    super(MSG.clientTimeout(seconds));
    this.name = "IdentifyTimeoutError";
  }
}

/** A network failure (no answer at all). */
export class IdentifyNetworkError extends Error {
  constructor() {
    super("Network request failed");
    this.name = "IdentifyNetworkError";
  }
}

function serverMessage(error: ApiError): string | null {
  const body = error.json<{ message?: unknown; error?: unknown }>();
  if (body) {
    if (typeof body.message === "string" && body.message.trim()) return body.message.trim();
    if (typeof body.error === "string" && body.error.trim()) return body.error.trim();
    return null;
  }
  const text = error.body.trim();
  return text && text.length < 300 && !text.startsWith("<") ? text : null;
}

/**
 * The limit a 413 of our server names ("File too large. Maximum allowed size is 10MB.", see
 * UploadError::TooLarge in src/identify/upload.rs): the limit in force when the request was
 * refused, which may differ from the settings this page loaded (an admin changed it since).
 */
export function limitOf(error: unknown): number | null {
  if (!(error instanceof ApiError) || error.status !== 413) return null;
  const m = /maximum allowed size is (\d+(?:\.\d+)?)\s*MB/i.exec(serverMessage(error) ?? "");
  const n = m?.[1] ? Number.parseFloat(m[1]) : NaN;
  return Number.isFinite(n) && n > 0 ? n : null;
}

/**
 * The SPEC message for an identify error (without the hint). `maxMb` is the site's limit as
 * this page knows it (the server's own number wins when a 413 names one).
 */
export function identifyMessage(error: unknown, maxMb = FALLBACK_MAX_MB): { message: string; requiresAuth: boolean } {
  if (error instanceof ApiError) {
    const s = error.status;
    const body = error.json<{ requiresAuth?: unknown }>();
    if (s === 403 && body?.requiresAuth === true) {
      return { message: serverMessage(error) ?? "Please sign in to continue identifying.", requiresAuth: true };
    }
    if (s === 413) return { message: MSG.tooLarge(limitOf(error) ?? maxMb), requiresAuth: false };
    if (s === 422) return { message: MSG.invalidFormat, requiresAuth: false };
    if (s === 408 || s === 504) return { message: MSG.timedOut, requiresAuth: false };
    if (s === 429) return { message: MSG.tooMany, requiresAuth: false };
    if (s >= 500) {
      // A 503 says why (busy, shutting down): worth showing. Without an engine it names the
      // variables the operator must set: that is for an administrator's eyes only.
      const setUp = errorCode(error) === "engine_unavailable";
      const own = s === 503 && (!setUp || viewerIsAdmin()) ? serverMessage(error) : null;
      return { message: own ? `${MSG.unavailable} ${own}` : MSG.unavailable, requiresAuth: false };
    }
    return { message: serverMessage(error) ?? MSG.generic, requiresAuth: false };
  }
  if (error instanceof IdentifyTimeoutError) return { message: `${MSG.timedOut} (${error.message})`, requiresAuth: false };
  if (error instanceof DOMException && (error.name === "TimeoutError" || error.name === "AbortError")) {
    return { message: MSG.timedOut, requiresAuth: false };
  }
  if (error instanceof IdentifyNetworkError || error instanceof TypeError) return { message: MSG.network, requiresAuth: false };
  if (error instanceof Error && error.message) return { message: error.message, requiresAuth: false };
  return { message: MSG.generic, requiresAuth: false };
}

function rawOf(error: unknown): string {
  if (error instanceof ApiError) return error.message;
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}

/**
 * Everything the error view needs for a failed identification (or shared-link load). One
 * size limit on the whole view: the server's when its 413 names one, else `maxMb`.
 */
export function describeFailure(error: unknown, maxMb = FALLBACK_MAX_MB): IdentifyFailure {
  const limit = limitOf(error) ?? maxMb;
  const { message, requiresAuth } = identifyMessage(error, limit);
  // The server's code when it says the kind, else the message shown.
  const kind = classifyError(error, message);
  const view = uploadErrorView(kind, limit);
  return {
    message: `${message} ${HINTS[kind]}`,
    base: message,
    hint: HINTS[kind],
    kind,
    title: view.title,
    advice: view.advice,
    raw: rawOf(error),
    requiresAuth,
    retryAfter: retryAfterOf(error),
  };
}

/** A failure described by a plain message (client validation, shared links). */
export function failureFromMessage(message: string, raw = message, maxMb = FALLBACK_MAX_MB): IdentifyFailure {
  const kind = classifyError(message);
  const view = uploadErrorView(kind, maxMb);
  return { message, base: message, hint: "", kind, title: view.title, advice: view.advice, raw, requiresAuth: false, retryAfter: 0 };
}
