/**
 * The identification result as the browser reads it (SPEC section 3), and the small rules
 * the result view applies to it: rating parsing and stars, match percentage, genre lists,
 * award colours, known streaming platforms, Library timestamps.
 *
 * The server answers camelCase JSON (src/identify/result.rs). Fields are read defensively:
 * older stored results, shared links and history rows may miss any of them.
 */

export interface Trailer {
  key?: string;
  name?: string;
  embedUrl?: string;
  url?: string;
}

export interface CastMember {
  id?: number | string | null;
  name: string;
  character?: string | null;
  profileUrl?: string | null;
}

export interface Platform {
  name: string;
  url?: string | null;
  logoUrl?: string | null;
}

export interface StreamingPlatforms {
  flatrate?: Platform[];
  rent?: Platform[];
  buy?: Platform[];
  link?: string | null;
  region?: string | null;
}

export interface SimilarTitle {
  title: string;
  year?: string | number | null;
  posterUrl?: string | null;
}

export interface BoxOffice {
  budget?: string | null;
  worldwide?: string | null;
  domestic?: string | null;
}

export interface Award {
  name?: string | null;
  category?: string | null;
  year?: string | number | null;
  organization?: string | null;
  event?: string | null;
  result?: string | null;
}

export interface Timestamp {
  from: number;
  at: number;
  to: number;
}

/** Library engine: another title of the library the matched scene also appears in. */
export interface SceneAppearance {
  title: string;
  year?: number | null;
  type?: string;
  season?: number | null;
  episode?: number | null;
  timestamp?: Timestamp | null;
}

/** A shot this long or longer is described as a shot, not as one moment. */
export const LONG_SHOT_SECONDS = 2;

/** "Show S01E02" or "Title (2008)". */
export function appearanceName(a: SceneAppearance): string {
  const pad = (n: number) => String(n).padStart(2, "0");
  if (a.season != null && a.episode != null) return `${a.title} S${pad(a.season)}E${pad(a.episode)}`;
  if (a.episode != null) return `${a.title} episode ${a.episode}`;
  return a.year != null ? `${a.title} (${a.year})` : a.title;
}

export interface IdentificationResult {
  /** Our own identification id (share links). */
  identificationId?: string;
  /** The external movie-database id (SPEC), or our id on older shapes. */
  id?: number | string | null;
  tmdbId?: number | null;
  title?: string;
  year?: string | number | null;
  type?: string;
  season?: number | null;
  episode?: number | null;
  episodeTitle?: string | null;
  runtime?: string | number | null;
  director?: string | null;
  rating?: number | string | null;
  confidence?: number | null;
  confidenceScore?: number | null;
  genres?: string[] | string | null;
  description?: string | null;
  tagline?: string | null;
  posterUrl?: string | null;
  poster?: string | null;
  trailerUrl?: string | null;
  trailers?: Trailer[] | null;
  cast?: CastMember[] | null;
  language?: string | null;
  country?: string | null;
  classification?: string | null;
  streamingPlatforms?: StreamingPlatforms | null;
  funFacts?: string[] | null;
  similarMovies?: SimilarTitle[] | null;
  boxOffice?: BoxOffice | null;
  awards?: Award[] | null;
  audioAnalysisResults?: unknown;
  engine?: string;
  model?: string | null;
  timestamp?: Timestamp | null;
  previewUrl?: string | null;
  alsoIn?: SceneAppearance[];
  detailsUnavailable?: boolean;
  notice?: string | null;
  /** Why details are missing (src/identify/result.rs DetailsReason). */
  detailsReason?: "noCatalogKey" | "notFound" | "catalogFailed" | null;
  createdAt?: string;
  /** The viewer made this identification (only then is the whole stored result sent). */
  isOwner?: boolean;
  /** Whether its link opens for others (the owner can stop sharing). */
  shared?: boolean;
  /** The catalog page, e.g. https://www.themoviedb.org/movie/603. */
  tmdbUrl?: string | null;
  [key: string]: unknown;
}

/** Limits of SPEC section 9. */
export const MAX_CAST = 12;
export const MAX_SIMILAR = 12;
export const MAX_AWARDS = 5;
export const DEFAULT_CONFIDENCE = 0.7;

/** `POST /api/identify` answers the result directly or as `{success, data}`. */
export function unwrapResult(body: unknown): IdentificationResult {
  if (body && typeof body === "object") {
    const o = body as Record<string, unknown>;
    if ("data" in o && o.data && typeof o.data === "object" && ("success" in o || !("title" in o))) {
      return o.data as IdentificationResult;
    }
    return o as IdentificationResult;
  }
  throw new Error("Failed to identify the scene. Please try again.");
}

/** The id a share link uses: our identification id, else a string id. */
export function shareIdOf(r: IdentificationResult): string | null {
  if (typeof r.identificationId === "string" && r.identificationId) return r.identificationId;
  if (typeof r.id === "string" && r.id) return r.id;
  return null;
}

/** Rating out of 10: a number, or the part before the slash of a string like "7.5/10". */
export function parseRating(rating: unknown): number | null {
  if (typeof rating === "number") return Number.isFinite(rating) ? rating : null;
  if (typeof rating === "string") {
    const head = rating.split("/")[0]?.trim() ?? "";
    if (!head) return null;
    const n = Number.parseFloat(head);
    return Number.isFinite(n) ? n : null;
  }
  return null;
}

export interface Stars {
  full: number;
  half: boolean;
  empty: number;
  /** Stars out of 5, e.g. 3.75. */
  value: number;
}

/** Stars out of 5 for a rating out of 10: rating / 2; a remainder of at least .5 is a half star. */
export function ratingStars(rating: unknown): Stars | null {
  const r = parseRating(rating);
  if (r === null) return null;
  const value = Math.min(5, Math.max(0, r / 2));
  const full = Math.floor(value);
  const half = full < 5 && value - full >= 0.5;
  return { full, half, empty: 5 - full - (half ? 1 : 0), value };
}

/** The confidence in 0..1: `confidence`, else `confidenceScore`, else 0.7. */
export function confidenceOf(r: Pick<IdentificationResult, "confidence" | "confidenceScore">): number {
  const c = typeof r.confidence === "number" && Number.isFinite(r.confidence) ? r.confidence : null;
  const s = typeof r.confidenceScore === "number" && Number.isFinite(r.confidenceScore) ? r.confidenceScore : null;
  return c ?? s ?? DEFAULT_CONFIDENCE;
}

/** Match percentage: rounded confidence times 100 (SPEC section 9). */
export function matchPercent(r: Pick<IdentificationResult, "confidence" | "confidenceScore">): number {
  return Math.round(confidenceOf(r) * 100);
}

/** Genres from an array or a comma-separated string. */
export function genreList(genres: unknown): string[] {
  const raw = Array.isArray(genres) ? genres : typeof genres === "string" ? genres.split(",") : [];
  return raw.map((g) => (typeof g === "string" ? g.trim() : "")).filter(Boolean);
}

/** Awards whose result says won or winner are shown green; the rest blue. */
export function awardTone(result: unknown): "won" | "nominated" {
  return typeof result === "string" && /\b(won|winner)\b/i.test(result) ? "won" : "nominated";
}

/** Runtime for display: strings as they are, minutes as "2h 19m". */
export function formatRuntime(runtime: unknown): string | null {
  if (typeof runtime === "number" && runtime > 0) {
    const h = Math.floor(runtime / 60);
    const m = Math.round(runtime % 60);
    return h ? `${h}h${m ? ` ${m}m` : ""}` : `${m}m`;
  }
  if (typeof runtime === "string" && runtime.trim()) return runtime.trim();
  return null;
}

/** Seconds as "1:23:45" (or "4:05" under an hour). */
export function formatClock(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  const pad = (n: number) => String(n).padStart(2, "0");
  return h ? `${h}:${pad(m)}:${pad(sec)}` : `${m}:${pad(sec)}`;
}

/** The poster: posterUrl, else the history's `poster`. */
export function posterOf(r: IdentificationResult): string | null {
  return (r.posterUrl || r.poster || null) as string | null;
}

export function isTv(r: Pick<IdentificationResult, "type">): boolean {
  return r.type === "tv";
}

/** The YouTube key of the first trailer, or one read from trailerUrl. */
export function trailerKey(r: IdentificationResult): string | null {
  const first = (r.trailers ?? []).find((t) => t && typeof t.key === "string" && t.key);
  if (first?.key) return first.key;
  for (const u of [r.trailerUrl, r.trailers?.[0]?.embedUrl, r.trailers?.[0]?.url]) {
    if (typeof u !== "string" || !u) continue;
    try {
      const url = new URL(u);
      const v = url.searchParams.get("v");
      if (v) return v;
      const m = /\/(?:embed|shorts)\/([\w-]{6,})/.exec(url.pathname) ?? (url.hostname === "youtu.be" ? /\/([\w-]{6,})/.exec(url.pathname) : null);
      if (m?.[1]) return m[1];
    } catch {
      /* not a URL */
    }
  }
  return null;
}

/** Where "Watch Trailer" goes: the trailer URL, else YouTube's page for the key. */
export function trailerWatchUrl(r: IdentificationResult): string | null {
  const key = trailerKey(r);
  if (key) return `https://www.youtube.com/watch?v=${encodeURIComponent(key)}`;
  return typeof r.trailerUrl === "string" && /^https?:\/\//.test(r.trailerUrl) ? r.trailerUrl : null;
}

/** The privacy-enhanced embed for a YouTube key. */
export function trailerEmbedUrl(key: string): string {
  return `https://www.youtube-nocookie.com/embed/${encodeURIComponent(key)}?rel=0`;
}

export function hasMoreDetails(r: IdentificationResult): boolean {
  const b = r.boxOffice;
  return (
    (r.funFacts?.length ?? 0) > 0 ||
    (r.similarMovies?.length ?? 0) > 0 ||
    (r.awards?.length ?? 0) > 0 ||
    !!(b && (b.budget || b.worldwide || b.domestic))
  );
}

/** Known streaming platforms (SPEC "Result view"): display name, colour, badge letter. */
export interface PlatformInfo {
  key: string;
  name: string;
  color: string;
  letter: string;
}

export const KNOWN_PLATFORMS: Record<string, PlatformInfo> = {
  netflix: { key: "netflix", name: "Netflix", color: "#E50914", letter: "N" },
  amazon_prime: { key: "amazon_prime", name: "Amazon Prime Video", color: "#00A8E1", letter: "P" },
  disney_plus: { key: "disney_plus", name: "Disney+", color: "#113CCF", letter: "D" },
  apple_tv: { key: "apple_tv", name: "Apple TV", color: "#111111", letter: "A" },
  youtube: { key: "youtube", name: "YouTube", color: "#FF0000", letter: "Y" },
};

/** The known platform key for a provider name ("Amazon Prime Video" -> amazon_prime), or null. */
export function platformKey(name: string): string | null {
  const n = name.toLowerCase().replace(/[^a-z0-9+]+/g, " ").trim();
  if (n.includes("netflix")) return "netflix";
  if (n.includes("prime") || n.startsWith("amazon")) return "amazon_prime";
  if (n.includes("disney")) return "disney_plus";
  if (n.startsWith("apple")) return "apple_tv";
  if (n.includes("youtube")) return "youtube";
  return null;
}

/** Display info of a provider: the known platform's, else its own name with a neutral colour. */
export function platformInfo(name: string): PlatformInfo {
  const key = platformKey(name);
  if (key) return { ...(KNOWN_PLATFORMS[key] as PlatformInfo), name: name || (KNOWN_PLATFORMS[key] as PlatformInfo).name };
  const letter = (name.trim()[0] ?? "?").toUpperCase();
  return { key: "other", name, color: "#5b6172", letter };
}

/** What a visitor reads when the server has no catalog key (NOTICE_NO_CATALOG in result.rs). */
export const NOTICE_NO_CATALOG = "Movie details are unavailable right now. Showing what the AI engine recognised.";
/** What an administrator reads beside it: the set-up that brings the details. */
export const ADMIN_HINT_NO_CATALOG =
  "Administrators: set TMDB_API_KEY or TMDB_READ_TOKEN on the server (or the tmdb_api_key setting) to show cast, trailers and where to watch.";

/**
 * The notice about missing details for this viewer: a neutral sentence, plus the set-up hint
 * for an administrator when the reason is a missing catalog key (older stored results named
 * the key in the notice itself: they read the same way).
 */
export function detailsNotice(r: IdentificationResult, admin: boolean): { text: string; adminHint: string | null } | null {
  if (!r.detailsUnavailable || !r.notice) return null;
  const noKey = r.detailsReason === "noCatalogKey" || r.notice.includes("TMDB_API_KEY");
  if (!noKey) return { text: r.notice, adminHint: null };
  return { text: NOTICE_NO_CATALOG, adminHint: admin ? ADMIN_HINT_NO_CATALOG : null };
}
