/**
 * The history screen for a signed-in person (SPEC "History screen"): count, Clear History
 * with its confirm dialog, title search, type filter, four sorts, cards, the detail modal
 * with the full result, pagination of 20, skeletons, empty and error states. The page
 * renders the signed-out prompt on the server. Props: `{ pageSize?: number }`.
 */
import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Suspense, lazy, useEffect, useId, useMemo, useState } from "react";
import { deleteJson, getJson } from "../lib/api";
import { useToast } from "../lib/useToast";
import {
  filterAndSort,
  HISTORY_PAGE_SIZE,
  itemMatch,
  itemPoster,
  itemResult,
  itemTitle,
  historyUrl,
  itemType,
  pageCount,
  SEARCH_DEBOUNCE_MS,
  shortDate,
  SKELETON_COUNT,
  SORTS,
  TYPE_FILTERS,
  type HistoryItem,
  type HistoryPage,
  type SortKey,
  type TypeFilter,
} from "../identify/history";
import { Icon } from "../identify/icons";
import { Modal } from "../identify/Modal";
import { parseRating } from "../identify/result";
import { Poster } from "../identify/Poster";
import type { HistoryProps } from "../generated/HistoryProps";
import { HISTORY_CHANGED } from "../identify/feedback/feedback";

/** The full result view is fetched when a person opens an entry, not with the list. */
const ResultView = lazy(() => import("../identify/ResultView").then((m) => ({ default: m.ResultView })));

export const HISTORY_KEY = "/api/history";

function Skeletons() {
  return (
    <ul className="id-history-grid" aria-busy="true" aria-label="Loading your history" data-testid="history-skeletons">
      {Array.from({ length: SKELETON_COUNT }, (_, i) => (
        <li key={i} className="id-history-card id-skeleton-card" aria-hidden="true">
          <div className="id-skeleton id-skeleton-poster" />
          <div className="id-skeleton id-skeleton-line" />
          <div className="id-skeleton id-skeleton-line id-short" />
        </li>
      ))}
    </ul>
  );
}

function Card({ item, onOpen }: { item: HistoryItem; onOpen: (item: HistoryItem) => void }) {
  const title = itemTitle(item);
  const rating = parseRating(item.rating);
  const tv = itemType(item) === "tv";
  return (
    <li className="id-history-card">
      <button type="button" className="id-history-open" onClick={() => onOpen(item)}>
        <Poster src={itemPoster(item)} alt="" className="id-history-poster" />
        {/* The spaces and commas ({", "}) keep the parts apart in the button's spoken name. */}
        <span className="id-history-body">
          <span className="id-history-title">{title}</span>
          <span className="id-sr-only">, </span>
          <span className="id-history-meta">
            <span className="id-type-icon" title={tv ? "TV show" : "Movie"}>
              <Icon name={tv ? "tv" : "film"} size={14} />
              <span className="id-sr-only">{tv ? "TV show" : "Movie"}</span>
            </span>{" "}
            {item.year && <span>{item.year}</span>}{" "}
            {rating !== null && (
              <span>
                <Icon name="star" size={12} className="id-inline-star" />
                <span className="id-sr-only">rated</span> {rating.toFixed(1)}
              </span>
            )}
          </span>
          <span className="id-sr-only">, </span>
          <span className="id-history-foot">
            <span className="id-match id-match-sm">{itemMatch(item)}% match</span>{" "}
            <time dateTime={item.createdAt}>{shortDate(item.createdAt)}</time>
          </span>
          <span className="id-sr-only">, open details</span>
        </span>
      </button>
    </li>
  );
}

export default function History({ pageSize = HISTORY_PAGE_SIZE }: Partial<HistoryProps>) {
  const { toast } = useToast();
  const queryClient = useQueryClient();
  // "Was this right?" in the detail can correct an entry's title: the list follows.
  useEffect(() => {
    const reload = () => void queryClient.invalidateQueries({ queryKey: [HISTORY_KEY] });
    window.addEventListener(HISTORY_CHANGED, reload);
    return () => window.removeEventListener(HISTORY_CHANGED, reload);
  }, [queryClient]);
  const [page, setPage] = useState(1);
  const [search, setSearch] = useState("");
  const [type, setType] = useState<TypeFilter>("all");
  const [sort, setSort] = useState<SortKey>("newest");
  const [open, setOpen] = useState<HistoryItem | null>(null);
  const [confirming, setConfirming] = useState(false);
  const searchId = useId();
  const typeId = useId();
  const sortId = useId();
  const limit = pageSize > 0 ? pageSize : HISTORY_PAGE_SIZE;

  // The search goes to the server (it covers every page) once typing pauses; meanwhile the
  // page on screen is filtered at once.
  const [serverSearch, setServerSearch] = useState("");
  useEffect(() => {
    const next = search.trim();
    if (next === serverSearch) return;
    const t = setTimeout(() => {
      setServerSearch(next);
      setPage(1);
    }, SEARCH_DEBOUNCE_MS);
    return () => clearTimeout(t);
  }, [search, serverSearch]);

  const q = useQuery({
    queryKey: [HISTORY_KEY, page, limit, serverSearch, type, sort],
    queryFn: () => getJson<HistoryPage>(historyUrl({ page, limit, search: serverSearch, type, sort })),
    placeholderData: keepPreviousData,
  });

  const clear = useMutation({
    mutationFn: () => deleteJson<unknown>("/api/history"),
    onSuccess: async () => {
      setConfirming(false);
      setPage(1);
      // Nothing is left to search or filter: the empty state says "No history yet".
      setSearch("");
      setServerSearch("");
      setType("all");
      toast({ title: "History cleared", description: "Your identification history has been cleared successfully." });
      await queryClient.invalidateQueries({ queryKey: [HISTORY_KEY] });
    },
    onError: () => {
      setConfirming(false);
      toast({ title: "Error", description: "Failed to clear history. Please try again.", variant: "destructive" });
    },
  });

  const items = useMemo(() => q.data?.items ?? [], [q.data]);
  const shown = useMemo(() => filterAndSort(items, search, type, sort), [items, search, type, sort]);
  const total = q.data?.total ?? 0;
  /** Everything the person has, whatever the filters: the count and Clear History go by it. */
  const totalAll = q.data?.totalAll ?? total;
  const pages = pageCount(total, q.data?.limit ?? limit);
  const filtering = search.trim() !== "" || type !== "all";

  let content;
  if (q.isPending) content = <Skeletons />;
  else if (q.isError)
    content = (
      <div className="id-empty id-history-error" role="alert">
        <Icon name="alert" size={32} />
        <h2>Something went wrong</h2>
        <p>We couldn't load your history. Please try again.</p>
        <button type="button" className="btn btn-primary" onClick={() => void q.refetch()}>
          Try again
        </button>
      </div>
    );
  else if (shown.length === 0)
    // A search or filter is active: "No results found" (SPEC "Empty states"), even with no
    // history at all, since the way out is the same (change the filters).
    content = filtering ? (
      <div className="id-empty" role="status">
        <Icon name="search" size={32} />
        <h2>No results found</h2>
        <p>Try adjusting your filters or search query</p>
      </div>
    ) : (
      <div className="id-empty" role="status">
        <Icon name="history" size={32} />
        <h2>No history yet</h2>
        <p>Start identifying movies and TV shows to build your history</p>
        <a className="btn btn-primary" href="/">
          Start Identifying
        </a>
      </div>
    );
  else
    content = (
      <>
        <ul className="id-history-grid" data-testid="history-list" aria-busy={q.isFetching}>
          {shown.map((it) => (
            <Card key={it.id} item={it} onOpen={setOpen} />
          ))}
        </ul>
        {pages > 1 && (
          <nav className="id-pagination" aria-label="History pages">
            <button type="button" className="btn btn-ghost" onClick={() => setPage((p) => Math.max(1, p - 1))} disabled={page <= 1}>
              <Icon name="chevronLeft" size={16} /> Previous
            </button>
            <span aria-live="polite">
              Page {page} of {pages}
            </span>
            <button
              type="button"
              className="btn btn-ghost"
              onClick={() => setPage((p) => Math.min(pages, p + 1))}
              disabled={page >= pages}
            >
              Next <Icon name="chevronRight" size={16} />
            </button>
          </nav>
        )}
      </>
    );

  return (
    <div className="id-history" data-testid="history">
      <div className="id-history-head">
        <div>
          <h1 className="id-history-h1">Identification History</h1>
          {q.data && (
            <p className="id-muted" aria-live="polite" data-testid="history-count">
              {totalAll} {totalAll === 1 ? "item" : "items"}
            </p>
          )}
        </div>
        {totalAll > 0 && (
          <button type="button" className="btn btn-ghost id-danger-btn" onClick={() => setConfirming(true)}>
            <Icon name="trash" size={16} /> Clear History
          </button>
        )}
      </div>

      <div className="id-history-controls" role="search">
        <div className="id-control id-control-search">
          <label htmlFor={searchId} className="id-sr-only">
            Search by title
          </label>
          <Icon name="search" size={16} className="id-control-icon" />
          <input
            id={searchId}
            type="search"
            className="id-input"
            placeholder="Search by title..."
            value={search}
            onChange={(e) => setSearch(e.target.value)}
          />
        </div>
        <div className="id-control">
          <label htmlFor={typeId} className="id-sr-only">
            Type
          </label>
          <select id={typeId} className="id-select" value={type} onChange={(e) => {
              setType(e.target.value as TypeFilter);
              setPage(1);
            }}>
            {TYPE_FILTERS.map((t) => (
              <option key={t.value} value={t.value}>
                {t.label}
              </option>
            ))}
          </select>
        </div>
        <div className="id-control">
          <label htmlFor={sortId} className="id-sr-only">
            Sort by
          </label>
          <select id={sortId} className="id-select" value={sort} onChange={(e) => {
              setSort(e.target.value as SortKey);
              setPage(1);
            }}>
            {SORTS.map((s) => (
              <option key={s.value} value={s.value}>
                {s.label}
              </option>
            ))}
          </select>
        </div>
      </div>

      {content}

      <Modal
        open={open !== null}
        onClose={() => setOpen(null)}
        title={open ? itemTitle(open) : "Identification"}
        hideTitle
        className="id-detail-dialog"
      >
        {open && (
          <>
            <button type="button" className="id-dialog-close" onClick={() => setOpen(null)} aria-label="Close" data-tooltip="">
              <Icon name="x" size={20} />
            </button>
            <Suspense
              fallback={
                <div className="id-panel id-loading" role="status">
                  <span className="id-spinner" aria-hidden="true" />
                  <p>Loading...</p>
                </div>
              }
            >
              <ResultView result={itemResult(open)} backLabel="Back" onBack={() => setOpen(null)} variant="modal" />
            </Suspense>
          </>
        )}
      </Modal>

      <Modal
        open={confirming}
        onClose={() => setConfirming(false)}
        title="Clear identification history?"
        description="This action cannot be undone. All your identification history will be permanently deleted."
        busy={clear.isPending}
        initialFocus={() => document.querySelector<HTMLElement>(".id-confirm-cancel")}
      >
        <div className="island-dialog-actions">
          <button type="button" className="btn btn-ghost id-confirm-cancel" onClick={() => setConfirming(false)} disabled={clear.isPending}>
            Cancel
          </button>
          <button
            type="button"
            className="btn btn-danger"
            onClick={() => clear.mutate()}
            disabled={clear.isPending}
            aria-busy={clear.isPending}
          >
            {clear.isPending ? "Clearing..." : "Clear History"}
          </button>
        </div>
      </Modal>
    </div>
  );
}
