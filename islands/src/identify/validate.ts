/**
 * Client-side checks of a picked file before it is sent (SPEC section 5). The server
 * checks again (sniffing the real type); these only save a pointless upload.
 */

export const FALLBACK_MAX_MB = 25;
export const DEFAULT_MAX_MB = 10;
export const DEFAULT_ALLOWED = ["jpg", "jpeg", "png", "webp", "mp4", "mov"];
const VIDEO_EXTENSIONS = new Set(["mp4", "mov", "avi", "webm", "mkv", "flv", "m4v", "mpeg", "mpg", "3gp"]);

export const MSG_NOT_MEDIA = "Please upload an image or video file";
export const MSG_FALLBACK_TOO_LARGE =
  "File size too large (over 25MB). Try compressing your file or choose a smaller image/video.";

export interface UploadRules {
  maxMb: number;
  allowed: string[];
}

/** The rules from the settings map (`max_file_size`, `allowed_file_types`), or null when unknown. */
export function rulesFromSettings(settings: Record<string, string> | null | undefined): UploadRules | null {
  if (!settings) return null;
  const n = Number.parseFloat(settings.max_file_size ?? "");
  const maxMb = Number.isFinite(n) && n > 0 ? n : DEFAULT_MAX_MB;
  const list = parseTypes(settings.allowed_file_types);
  return { maxMb, allowed: list.length ? list : DEFAULT_ALLOWED };
}

export function parseTypes(value: unknown): string[] {
  const raw = Array.isArray(value) ? value : typeof value === "string" ? value.split(",") : [];
  return raw
    .map((t) => (typeof t === "string" ? t.trim().toLowerCase().replace(/^\./, "") : ""))
    .filter(Boolean);
}

/** The extension of a file name, lower case without the dot ("" when none). */
export function extensionOf(name: string): string {
  const i = name.lastIndexOf(".");
  return i > 0 && i < name.length - 1 ? name.slice(i + 1).toLowerCase() : "";
}

export function isVideoFile(file: Pick<File, "name" | "type">): boolean {
  if (file.type.startsWith("video/")) return true;
  if (file.type.startsWith("image/")) return false;
  return VIDEO_EXTENSIONS.has(extensionOf(file.name));
}

/**
 * The SPEC message for a file that may not be sent, or null when it may. With rules
 * (settings loaded): the size limit and the extension list. Without: image or video, 25MB.
 */
export function validateFile(file: Pick<File, "name" | "type" | "size">, rules: UploadRules | null): string | null {
  if (rules) {
    if (file.size > rules.maxMb * 1024 * 1024) return `File too large. Maximum allowed size is ${rules.maxMb}MB.`;
    const ext = extensionOf(file.name);
    if (!rules.allowed.includes(ext)) {
      return `File type "${ext || file.name}" not supported. Please upload one of these formats: ${rules.allowed.join(", ")}.`;
    }
    return null;
  }
  if (!file.type.startsWith("image/") && !file.type.startsWith("video/")) return MSG_NOT_MEDIA;
  if (file.size > FALLBACK_MAX_MB * 1024 * 1024) return MSG_FALLBACK_TOO_LARGE;
  return null;
}

/** The `accept` attribute for the file input. */
export function acceptAttribute(rules: UploadRules | null): string {
  if (!rules) return "image/*,video/*";
  return rules.allowed.map((e) => `.${e}`).join(",");
}

/** Identify deadlines of SPEC section 9: 120 s, 240 s for video with audio analysis. */
export function timeoutMs(isVideo: boolean, useAudio: boolean): number {
  return isVideo && useAudio ? 240_000 : 120_000;
}

/** The expected time shown on the processing screen. */
export function expectedTime(isVideo: boolean, useAudio: boolean): string {
  if (!isVideo) return "30-60s";
  return useAudio ? "2-4 min" : "1-2 min";
}
