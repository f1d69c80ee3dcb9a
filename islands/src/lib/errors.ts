/**
 * Turning errors into words a person understands (SPEC section 8) and sorting error texts
 * into kinds (SPEC section 5), shared by every island.
 */

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

/** Sorts an error text (SPEC section 5): timeout, format, size, network or other. */
export function classifyError(error: unknown): ErrorKind {
  const text = (error instanceof Error ? error.message : String(error ?? "")).toLowerCase();
  if (text.includes("timeout") || text.includes("timed out")) return "timeout";
  if (text.includes("format") || text.includes("invalid")) return "format";
  if (text.includes("size") || text.includes("large")) return "size";
  if (text.includes("network") || text.includes("connection")) return "network";
  return "other";
}

/** Titles and advice of the upload error view, by kind (SPEC section 8). */
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
    advice: ["The file exceeds our maximum size limit of 25MB", "Compress the file or choose a shorter clip"],
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
