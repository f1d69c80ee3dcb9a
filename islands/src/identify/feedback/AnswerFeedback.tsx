/**
 * "Was this right?" under a result (the result view and the history detail), for the
 * signed-in owner of the identification. Yes confirms; No opens a title search (the
 * catalog's, with posters and years; a combobox: type, arrow keys, Enter) to pick the right
 * title, or "I don't know". One answer per identification (the server keeps it). A picked
 * title corrects the person's own result at once (`onCorrected`); what the server remembers
 * for everyone changes only by the corrections rule.
 *
 * Also the note of an answer from memory ("Recognised from earlier identifications") and of
 * a corrected answer.
 */
import { useEffect, useId, useRef, useState, type KeyboardEvent } from "react";
import { getJson, postJson } from "../../lib/api";
import { Icon } from "../icons";
import { Poster } from "../Poster";
import type { IdentificationResult } from "../result";
import { feedbackError, type FeedbackAnswer, type Verdict, type TitleHit, HISTORY_CHANGED, SEARCH_DEBOUNCE_MS } from "./feedback";

export interface AnswerFeedbackProps {
  result: IdentificationResult;
  /** The person's own result changed (they picked a title). */
  onCorrected?: (r: IdentificationResult) => void;
}

type Step = "ask" | "search" | "saving" | "done";

interface FromMemory {
  confirmations?: number;
}
interface Correction {
  by?: string;
  previousTitle?: string;
}

export function MemoryNote({ result }: { result: IdentificationResult }) {
  const memory = result.fromMemory as FromMemory | null | undefined;
  const correction = result.correction as Correction | null | undefined;
  if (!memory && !correction) return null;
  return (
    <div className="fb-notes">
      {memory && (
        <p className="fb-note" data-testid="from-memory">
          <Icon name="history" size={16} /> Recognised from earlier identifications
          {typeof memory.confirmations === "number" && memory.confirmations > 0
            ? ` · confirmed by ${memory.confirmations} ${memory.confirmations === 1 ? "person" : "people"}`
            : ""}
        </p>
      )}
      {correction?.previousTitle && (
        <p className="fb-note" data-testid="corrected-note">
          <Icon name="check" size={16} />{" "}
          {correction.by === "you"
            ? `You corrected this from ${correction.previousTitle}.`
            : correction.by === "admin"
              ? `Corrected by the site from ${correction.previousTitle}.`
              : `Corrected by people who identified this scene (it first said ${correction.previousTitle}).`}
        </p>
      )}
    </div>
  );
}

export function AnswerFeedback({ result, onCorrected }: AnswerFeedbackProps) {
  const id = result.identificationId;
  const given = typeof result.feedback === "string" ? (result.feedback as Verdict) : null;
  const [step, setStep] = useState<Step>(given ? "done" : "ask");
  const [said, setSaid] = useState<string | null>(given ? (given === "right" ? "You said this was right." : "You said this was wrong.") : null);
  const [error, setError] = useState<string | null>(null);
  const [query, setQuery] = useState("");
  const [hits, setHits] = useState<TitleHit[]>([]);
  const [active, setActive] = useState(-1);
  const [searching, setSearching] = useState(false);
  const inputRef = useRef<HTMLInputElement>(null);
  const listId = useId();
  const headingId = useId();

  // Another identification starts afresh (this one's own answer keeps its thanks).
  const shownId = useRef(id);
  useEffect(() => {
    if (shownId.current === id) return;
    shownId.current = id;
    setStep(given ? "done" : "ask");
    setSaid(given ? (given === "right" ? "You said this was right." : "You said this was wrong.") : null);
    setError(null);
  }, [id, given]);

  useEffect(() => {
    if (step === "search") inputRef.current?.focus();
  }, [step]);

  // Debounced catalog search.
  useEffect(() => {
    if (step !== "search") return;
    const q = query.trim();
    if (q.length < 2) {
      setHits([]);
      setActive(-1);
      return;
    }
    const ctrl = new AbortController();
    const t = window.setTimeout(async () => {
      setSearching(true);
      try {
        const found = await getJson<TitleHit[]>(`/api/titles/search?q=${encodeURIComponent(q)}`, { signal: ctrl.signal });
        setHits(found);
        setActive(found.length > 0 ? 0 : -1);
        setError(null);
      } catch (e) {
        if (!ctrl.signal.aborted) setError(feedbackError(e, "search"));
      } finally {
        if (!ctrl.signal.aborted) setSearching(false);
      }
    }, SEARCH_DEBOUNCE_MS);
    return () => {
      ctrl.abort();
      window.clearTimeout(t);
    };
  }, [query, step]);

  if (!id || result.isOwner !== true) return null;

  const send = async (body: { verdict: Verdict; tmdbId?: number; type?: string }, thanks: string) => {
    setStep("saving");
    setError(null);
    try {
      const answer = await postJson<FeedbackAnswer>(`/api/identification/${encodeURIComponent(id)}/feedback`, body);
      setSaid(thanks);
      setStep("done");
      if (body.tmdbId != null) {
        onCorrected?.({ ...answer.result, isOwner: true, shared: result.shared, feedback: answer.verdict });
      }
      window.dispatchEvent(new CustomEvent(HISTORY_CHANGED));
    } catch (e) {
      setError(feedbackError(e, "vote"));
      setStep(body.verdict === "wrong" && body.tmdbId != null ? "search" : "ask");
    }
  };

  const pick = (h: TitleHit) =>
    void send({ verdict: "wrong", tmdbId: h.tmdbId, type: h.type }, `Thanks. Your result now shows ${h.title}${h.year ? ` (${h.year})` : ""}.`);

  const onKey = (e: KeyboardEvent<HTMLInputElement>) => {
    if (e.key === "ArrowDown" && hits.length > 0) {
      e.preventDefault();
      setActive((a) => (a + 1) % hits.length);
    } else if (e.key === "ArrowUp" && hits.length > 0) {
      e.preventDefault();
      setActive((a) => (a <= 0 ? hits.length - 1 : a - 1));
    } else if (e.key === "Enter" && active >= 0 && hits[active]) {
      e.preventDefault();
      pick(hits[active]);
    } else if (e.key === "Escape") {
      e.preventDefault();
      setStep("ask");
    }
  };

  return (
    <section className="fb-panel" aria-labelledby={headingId} data-testid="answer-feedback">
      <h3 id={headingId} className="fb-title">
        Was this right?
      </h3>
      {step === "done" && (
        <p className="fb-done" role="status">
          {said}
        </p>
      )}
      {(step === "ask" || step === "saving") && (
        <div className="fb-buttons">
          <button type="button" className="btn btn-ghost" disabled={step === "saving"} onClick={() => void send({ verdict: "right" }, "Thanks for confirming.")}>
            <Icon name="check" size={16} /> Yes
          </button>
          <button type="button" className="btn btn-ghost" disabled={step === "saving"} onClick={() => setStep("search")}>
            <Icon name="x" size={16} /> No
          </button>
        </div>
      )}
      {step === "search" && (
        <div className="fb-search">
          <label htmlFor={`${listId}-q`} className="fb-label">
            Which title is it?
          </label>
          <div className="fb-search-row">
            <Icon name="search" size={16} />
            <input
              id={`${listId}-q`}
              ref={inputRef}
              type="search"
              role="combobox"
              aria-expanded={hits.length > 0}
              aria-controls={listId}
              aria-autocomplete="list"
              aria-activedescendant={active >= 0 ? `${listId}-${active}` : undefined}
              placeholder="Search movies and TV shows..."
              value={query}
              onChange={(e) => setQuery(e.target.value)}
              onKeyDown={onKey}
              autoComplete="off"
              maxLength={100}
            />
          </div>
          <p className="fb-hint id-muted" aria-live="polite">
            {searching ? "Searching..." : query.trim().length >= 2 && hits.length === 0 ? "No titles found." : "Type at least 2 letters; arrow keys and Enter pick."}
          </p>
          {hits.length > 0 && (
            <ul id={listId} role="listbox" className="fb-hits" aria-label="Titles">
              {hits.map((h, i) => (
                <li
                  key={`${h.type}-${h.tmdbId}`}
                  id={`${listId}-${i}`}
                  role="option"
                  aria-selected={i === active}
                  className={`fb-hit${i === active ? " fb-hit-active" : ""}`}
                  onMouseEnter={() => setActive(i)}
                  onMouseDown={(e) => e.preventDefault()}
                  onClick={() => pick(h)}
                >
                  <Poster src={h.posterUrl ?? undefined} alt="" className="fb-hit-poster" />
                  <span className="fb-hit-text">
                    <span className="fb-hit-title">{h.title}</span>
                    <span className="id-muted">
                      {h.year ?? "Year unknown"} · {h.type === "tv" ? "TV show" : "Movie"}
                    </span>
                  </span>
                </li>
              ))}
            </ul>
          )}
          <div className="fb-buttons">
            <button type="button" className="btn btn-ghost" onClick={() => void send({ verdict: "wrong" }, "Thanks. We will look at this answer again.")}>
              I don't know
            </button>
            <button type="button" className="btn btn-ghost" onClick={() => setStep("ask")}>
              Cancel
            </button>
          </div>
        </div>
      )}
      {error && (
        <p className="fb-error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}
