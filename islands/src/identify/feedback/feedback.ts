/** Shapes and words of "Was this right?" (`AnswerFeedback.tsx`). */
import { ApiError, statusOf } from "../../lib/api";
import type { IdentificationResult } from "../result";

export type Verdict = "right" | "wrong";

/** A title from `GET /api/titles/search`. */
export interface TitleHit {
  tmdbId: number;
  type: "movie" | "tv" | string;
  title: string;
  year?: string | null;
  posterUrl?: string | null;
}

/** The answer of `POST /api/identification/{id}/feedback`. */
export interface FeedbackAnswer {
  verdict: Verdict;
  result: IdentificationResult;
  memoryChangedTo?: { tmdbId: number; type: string; title: string; year?: string | null } | null;
}

/** Sent on `window` after a vote: the history list reloads. */
export const HISTORY_CHANGED = "reelfind:history-changed";

export const SEARCH_DEBOUNCE_MS = 250;

/** What to tell the person when a search or a vote failed. */
export function feedbackError(e: unknown, what: "search" | "vote"): string {
  const status = statusOf(e);
  if (status === 401) return "Please sign in again to answer.";
  if (status === 409) return "You have already answered for this identification.";
  if (status === 429) return "Too many answers or searches. Please wait a moment and try again.";
  if (status === 503) return "Title search is not available on this server right now.";
  if (e instanceof ApiError && status !== null && status < 500) {
    const body = e.json<{ error?: string; message?: string }>();
    if (body?.error || body?.message) return String(body.error ?? body.message);
  }
  return what === "search" ? "The title search failed. Please try again." : "Your answer could not be saved. Please try again.";
}
