/**
 * Home "Recent Identifications" (SPEC "Home page", section 7): the most confident recent
 * matches from GET /api/history/top-confident, at most 3, one retry. The list carries no
 * identification ids (they would open other people's results); a card links to the title's
 * catalog page when there is one. Props: `{ limit?: number }`.
 */
import { useQuery } from "@tanstack/react-query";
import { getJson } from "../lib/api";
import { Icon } from "../identify/icons";
import { genreList, matchPercent, parseRating } from "../identify/result";
import { Poster } from "../identify/Poster";
import type { RecentIdentificationsProps } from "../generated/RecentIdentificationsProps";

export interface TopItem {
  title: string;
  tmdbUrl?: string | null;
  year?: string | null;
  posterUrl?: string | null;
  rating?: number | string | null;
  confidenceScore?: number | null;
  type?: string;
  genres?: string[] | string;
}

export const MAX_RECENT = 3;

export default function RecentIdentifications({ limit = MAX_RECENT }: Partial<RecentIdentificationsProps>) {
  const q = useQuery({
    queryKey: ["/api/history/top-confident"],
    queryFn: () => getJson<TopItem[]>("/api/history/top-confident"),
    retry: 1,
  });
  const n = Math.min(limit, MAX_RECENT);

  if (q.isPending) {
    return (
      <ul className="id-recent" aria-busy="true" aria-label="Loading recent identifications">
        {Array.from({ length: n }, (_, i) => (
          <li key={i} className="id-recent-card id-skeleton-card" aria-hidden="true">
            <div className="id-skeleton id-skeleton-poster" />
            <div className="id-skeleton id-skeleton-line" />
          </li>
        ))}
      </ul>
    );
  }
  if (q.isError) {
    return <p className="id-empty-note">Recent identifications are not available right now.</p>;
  }
  const items = (Array.isArray(q.data) ? q.data : []).slice(0, n);
  if (items.length === 0) {
    return (
      <p className="id-empty-note">
        No identifications yet. Be the first: upload a scene above and it may show up here.
      </p>
    );
  }
  return (
    <ul className="id-recent" data-testid="recent-list">
      {items.map((it) => {
        const rating = parseRating(it.rating);
        const genres = genreList(it.genres).slice(0, 2);
        const body = (
          <>
              <Poster src={it.posterUrl} alt={`${it.title} poster`} className="id-recent-poster" />
              <span className="id-recent-body">
                <span className="id-recent-title">{it.title || "Unknown Title"}</span>
                <span className="id-recent-meta">
                  <Icon name={it.type === "tv" ? "tv" : "film"} size={14} />
                  {it.year && <span>{it.year}</span>}
                  {rating !== null && (
                    <span>
                      <Icon name="star" size={12} className="id-inline-star" /> {rating.toFixed(1)}
                    </span>
                  )}
                </span>
                {genres.length > 0 && <span className="id-muted id-recent-genres">{genres.join(" · ")}</span>}
                <span className="id-match id-match-sm">{matchPercent({ confidenceScore: it.confidenceScore ?? null })}% match</span>
              </span>
          </>
        );
        return (
          <li key={`${it.title}-${it.year ?? ""}`} className="id-recent-card">
            {it.tmdbUrl ? (
              <a className="id-recent-link" href={it.tmdbUrl} target="_blank" rel="noopener noreferrer">
                {body}
              </a>
            ) : (
              <div className="id-recent-link">{body}</div>
            )}
          </li>
        );
      })}
    </ul>
  );
}
