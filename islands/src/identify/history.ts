/**
 * The history screen's rules (SPEC "History screen", section 9): title search, the type
 * filter (all, movie, tv), the four sorts, card facts (poster, match, short date).
 */
import { confidenceOf, parseRating, type IdentificationResult } from "./result";

export interface HistoryItem {
  id: string;
  title?: string | null;
  description?: string | null;
  year?: string | number | null;
  rating?: number | string | null;
  posterUrl?: string | null;
  director?: string | null;
  stars?: string[];
  genres?: string[] | string | null;
  runtime?: string | null;
  classification?: string | null;
  confidenceScore?: number | null;
  type?: string | null;
  createdAt?: string;
  streamingPlatforms?: unknown;
  fullResult?: (IdentificationResult & { poster?: string | null }) | null;
}

export interface HistoryPage {
  items: HistoryItem[];
  /** How many match the search and type filter. */
  total: number;
  /** How many the person has in all (older servers leave it out). */
  totalAll?: number;
  page: number;
  limit: number;
}

export type SortKey = "newest" | "oldest" | "rating" | "confidence";
export type TypeFilter = "all" | "movie" | "tv";

export const SORTS: { value: SortKey; label: string }[] = [
  { value: "newest", label: "Newest First" },
  { value: "oldest", label: "Oldest First" },
  { value: "rating", label: "Highest Rating" },
  { value: "confidence", label: "Highest Confidence" },
];

export const TYPE_FILTERS: { value: TypeFilter; label: string }[] = [
  { value: "all", label: "All Types" },
  { value: "movie", label: "Movies Only" },
  { value: "tv", label: "TV Shows Only" },
];

export const HISTORY_PAGE_SIZE = 20;
/** The title search is sent to the server once typing pauses this long. */
export const SEARCH_DEBOUNCE_MS = 250;

/** `GET /api/history` with the page and, when set, the search, type and order. */
export function historyUrl(o: { page: number; limit: number; search?: string; type?: TypeFilter; sort?: SortKey }): string {
  const p = new URLSearchParams({ page: String(o.page), limit: String(o.limit) });
  if (o.search && o.search.trim()) p.set("search", o.search.trim());
  if (o.type && o.type !== "all") p.set("type", o.type);
  if (o.sort && o.sort !== "newest") p.set("sort", o.sort);
  return `/api/history?${p.toString()}`;
}
export const SKELETON_COUNT = 8;

/** movie or tv: the item's type, else its full result's type, else movie. */
export function itemType(item: HistoryItem): "movie" | "tv" {
  const t = item.type ?? item.fullResult?.type;
  return t === "tv" ? "tv" : "movie";
}

export function itemTitle(item: HistoryItem): string {
  return (item.title && item.title.trim()) || "Unknown Title";
}

export function itemPoster(item: HistoryItem): string | null {
  return item.posterUrl || item.fullResult?.posterUrl || item.fullResult?.poster || null;
}

export function itemMatch(item: HistoryItem): number {
  return Math.round(confidenceOf({ confidenceScore: item.confidenceScore ?? null, confidence: null }) * 100);
}

function time(item: HistoryItem): number {
  const t = item.createdAt ? Date.parse(item.createdAt) : Number.NaN;
  return Number.isFinite(t) ? t : 0;
}

/** "Nov 22" style date, or "" for a missing or bad date. */
export function shortDate(iso: string | undefined, locale?: string): string {
  if (!iso) return "";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "";
  return d.toLocaleDateString(locale ?? "en-US", { month: "short", day: "numeric" });
}

/** Filters by title (case-insensitive substring) and type, then sorts. Never mutates. */
export function filterAndSort(items: readonly HistoryItem[], query: string, type: TypeFilter, sort: SortKey): HistoryItem[] {
  const q = query.trim().toLowerCase();
  const out = items.filter(
    (it) => (!q || itemTitle(it).toLowerCase().includes(q)) && (type === "all" || itemType(it) === type),
  );
  const rating = (it: HistoryItem) => parseRating(it.rating) ?? -1;
  const conf = (it: HistoryItem) => it.confidenceScore ?? -1;
  const cmp: Record<SortKey, (a: HistoryItem, b: HistoryItem) => number> = {
    newest: (a, b) => time(b) - time(a),
    oldest: (a, b) => time(a) - time(b),
    rating: (a, b) => rating(b) - rating(a) || time(b) - time(a),
    confidence: (a, b) => conf(b) - conf(a) || time(b) - time(a),
  };
  return out.sort(cmp[sort]);
}

/** The result to show in the detail modal: the full result, filled from the row where it lacks. */
export function itemResult(item: HistoryItem): IdentificationResult {
  const full = item.fullResult ?? {};
  return {
    ...full,
    identificationId: (full.identificationId as string | undefined) || item.id,
    title: full.title || item.title || "Unknown Title",
    year: full.year ?? item.year ?? null,
    rating: full.rating ?? item.rating ?? null,
    posterUrl: itemPoster(item),
    director: full.director ?? item.director ?? null,
    genres: full.genres ?? item.genres ?? null,
    runtime: full.runtime ?? item.runtime ?? null,
    classification: full.classification ?? item.classification ?? null,
    description: full.description ?? item.description ?? null,
    confidenceScore: item.confidenceScore ?? full.confidenceScore ?? null,
    type: itemType(item),
  };
}

export function pageCount(total: number, limit: number): number {
  return Math.max(1, Math.ceil(total / Math.max(1, limit)));
}
