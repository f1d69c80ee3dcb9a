/**
 * Turning errors into words a person understands (SPEC section 8) and sorting errors into
 * kinds (SPEC section 5), shared by every island. A JSON error of our server carries a
 * stable machine `code` (src/error_code.rs, generated into src/generated/ErrorCode.ts):
 * that decides whenever it says something; the text is read only when there is no code
 * (a proxy's HTML page, a network failure, a client-side error) or the code leaves it open.
 */
import { ApiError } from "./api";
import type { ErrorCode } from "../generated/ErrorCode";

/** The `code` of our server's JSON error body, or null (not an ApiError, not JSON, no code). */
export function errorCode(error: unknown): ErrorCode | null {
  if (!(error instanceof ApiError)) return null;
  const code = error.json<{ code?: unknown }>()?.code;
  return typeof code === "string" && Object.hasOwn(KIND_OF_CODE, code) ? (code as ErrorCode) : null;
}

export const FRIENDLY = {
  connection: "Connection error. Please check your internet connection and try again.",
  session: "Session expired. Please sign in again.",
  server: "Server error. Please try again in a few moments.",
  upload: "File upload failed. Please check file size and format.",
  unexpected: "An unexpected error occurred. Please try again.",
} as const;

/**
 * The friendly message for an error, by its text: "fetch" -> connection, "401" or
 * "unauthorized" -> session expired, "500" -> server, "file" or "upload" -> upload;
 * another Error shows its own message; anything else is "unexpected".
 */
export function friendlyMessage(error: unknown): string {
  const code = errorCode(error);
  if (code) {
    const byCode = FRIENDLY_OF_CODE[code];
    if (byCode) return byCode;
  }
  const text = error instanceof Error ? error.message : typeof error === "string" ? error : "";
  const lower = text.toLowerCase();
  if (lower.includes("fetch")) return FRIENDLY.connection;
  if (lower.includes("401") || lower.includes("unauthorized")) return FRIENDLY.session;
  if (lower.includes("500")) return FRIENDLY.server;
  if (lower.includes("file") || lower.includes("upload")) return FRIENDLY.upload;
  if (error instanceof Error && text) return text;
  return FRIENDLY.unexpected;
}

export type ErrorKind = "timeout" | "format" | "size" | "network" | "other";

/**
 * The kind each server code means; null where the code does not say (a validation message,
 * an engine problem): then the text decides. Every code is listed, so a new one in Rust fails
 * the typecheck here until it is given a kind.
 */
const KIND_OF_CODE: Record<ErrorCode, ErrorKind | null> = {
  invalid_request: null,
  invalid_body: null,
  validation_failed: null,
  unsupported_media_type: "format",
  method_not_allowed: null,
  file_missing: null,
  too_many_files: null,
  upload_interrupted: "network",
  invalid_file_format: "format",
  unknown_engine: null,
  password_mismatch: null,
  weak_password: null,
  no_password: null,
  reset_link_invalid: null,
  not_authenticated: null,
  invalid_credentials: null,
  wrong_password: null,
  email_not_verified: null,
  sign_in_required: null,
  forbidden: null,
  admin_required: null,
  cross_origin_refused: null,
  reauth_required: null,
  engine_disabled: null,
  not_found: null,
  no_match: null,
  conflict: null,
  already_registered: null,
  last_admin: null,
  edit_conflict: null,
  file_too_large: "size",
  payload_too_large: "size",
  upload_timeout: "timeout",
  rate_limited: null,
  quota_per_minute: null,
  quota_per_day: null,
  quota_concurrent: null,
  server_busy: null,
  shutting_down: null,
  timeout: "timeout",
  service_unavailable: null,
  engine_unavailable: null,
  engine_busy: null,
  engine_failed: null,
  library_unavailable: null,
  delivery_failed: null,
  internal_error: null,
};

/** The friendly message a code means (SPEC section 8); the others fall back to the text rules. */
const FRIENDLY_OF_CODE: Partial<Record<ErrorCode, string>> = {
  not_authenticated: FRIENDLY.session,
  internal_error: FRIENDLY.server,
  file_too_large: FRIENDLY.upload,
  invalid_file_format: FRIENDLY.upload,
  upload_interrupted: FRIENDLY.upload,
};

/**
 * Sorts an error (SPEC section 5): timeout, format, size, network or other. By the server's
 * `code` when it has one that says; else by the text (`text` when given, such as the message
 * shown for the error, else the error's own): timeout or timed out; format or invalid; size
 * or large; network or connection; anything else.
 */
export function classifyError(error: unknown, text?: string): ErrorKind {
  const code = errorCode(error);
  const byCode = code ? KIND_OF_CODE[code] : null;
  if (byCode) return byCode;
  return classifyText(text ?? (error instanceof Error ? error.message : String(error ?? "")));
}

function classifyText(raw: string): ErrorKind {
  const text = raw.toLowerCase();
  if (text.includes("timeout") || text.includes("timed out")) return "timeout";
  if (text.includes("format") || text.includes("invalid")) return "format";
  if (text.includes("size") || text.includes("large")) return "size";
  if (text.includes("network") || text.includes("connection")) return "network";
  return "other";
}

/** The size limit the SPEC falls back to when the site's own limit is not known (section 9). */
export const FALLBACK_MAX_MB = 25;

/**
 * Titles and advice of the upload error view, by kind (SPEC section 8). The size advice names
 * a limit: use `uploadErrorView`, which puts the limit in force there (SPEC's 25MB fallback).
 */
export const UPLOAD_ERROR_VIEW: Record<ErrorKind, { title: string; advice: string[] }> = {
  timeout: {
    title: "Upload Timed Out",
    advice: ["Try a smaller file", "Check your internet connection", "Compress the video before uploading"],
  },
  format: {
    title: "File Format Issue",
    advice: ["Use JPEG, PNG, MP4 or MOV", "Convert the file to a supported format", "Check that the file is not corrupted"],
  },
  size: {
    title: "File Too Large",
    advice: [sizeAdvice(FALLBACK_MAX_MB), "Compress the file or choose a shorter clip"],
  },
  network: {
    title: "Connection Issue",
    advice: ["Check your internet connection", "Try again in a moment"],
  },
  other: {
    title: "Identification Failed",
    advice: ["Try a clearer image", "Pick a frame with recognizable actors or scenes", "Try a different frame"],
  },
};

function sizeAdvice(maxMb: number): string {
  return `The file exceeds our maximum size limit of ${maxMb}MB`;
}

/**
 * The title and advice for an error kind, the size advice naming `maxMb`: the one limit the
 * whole view speaks of (the message above it names the same number).
 */
export function uploadErrorView(kind: ErrorKind, maxMb: number = FALLBACK_MAX_MB): { title: string; advice: string[] } {
  const view = UPLOAD_ERROR_VIEW[kind];
  if (kind !== "size") return view;
  return { title: view.title, advice: [sizeAdvice(maxMb), ...view.advice.slice(1)] };
}
