/**
 * The result view of SPEC "Result view": sticky header (back, Successfully Identified,
 * Share Experience), poster and facts, rating stars and match, actions (Watch Trailer,
 * Share, Add to Collection), the tabs Overview / Cast / Trailer / More Details (one file each
 * in tabs/), and the Where to Watch panel (WhereToWatch.tsx). Used by the uploader, shared
 * links and the history modal.
 */
import { requestAchievementCheck } from "../lib/achievements";
import { useEffect, useId, useRef, useState } from "react";
import { putJson } from "../lib/api";
import { useToast } from "../lib/useToast";
import { addToCollection, track } from "./api";
import { viewerIsAdmin } from "./errors";
import { Icon } from "./icons";
import { Poster } from "./Poster";
import { RatingStars } from "./RatingStars";
import { ReviewDialog } from "./ReviewDialog";
import {
  appearanceName,
  detailsNotice,
  formatClock,
  formatRuntime,
  genreList,
  hasMoreDetails,
  LONG_SHOT_SECONDS,
  isTv,
  matchPercent,
  posterOf,
  shareIdOf,
  trailerKey,
  trailerWatchUrl,
  type IdentificationResult,
} from "./result";
import { shareResult } from "./share";
import { CastTab } from "./tabs/CastTab";
import { MoreDetailsTab } from "./tabs/MoreDetailsTab";
import { OverviewTab } from "./tabs/OverviewTab";
import { TrailerTab } from "./tabs/TrailerTab";
import { Tabs, type TabDef } from "./Tabs";
import { WhereToWatch } from "./WhereToWatch";
import { AnswerFeedback, MemoryNote } from "./feedback/AnswerFeedback";

export interface ResultViewProps {
  result: IdentificationResult;
  /** The back button: "Identify Another", "New Search", or "Back" when given by a modal. */
  backLabel: string;
  onBack: () => void;
  /** Move focus to the title when shown (announces the result). Default true. */
  autoFocus?: boolean;
  /** Where the view lives: in the page (sticky header) or in a modal. */
  variant?: "page" | "modal";
}

/** The result as shown: the owner's correction ("Was this right?" → a picked title) replaces it. */
export function ResultView(props: ResultViewProps) {
  const [shown, setShown] = useState(props.result);
  useEffect(() => setShown(props.result), [props.result]);
  return <ResultBody {...props} result={shown} onCorrected={setShown} />;
}

function ResultBody({
  result,
  backLabel,
  onBack,
  autoFocus = true,
  variant = "page",
  onCorrected,
}: ResultViewProps & { onCorrected: (r: IdentificationResult) => void }) {
  const { toast } = useToast();
  const [tab, setTab] = useState("overview");
  const [reviewOpen, setReviewOpen] = useState(false);
  const [adding, setAdding] = useState(false);
  const [saved, setSaved] = useState(false);
  useEffect(() => setSaved(false), [result]);
  const headingRef = useRef<HTMLHeadingElement>(null);
  const articleRef = useRef<HTMLElement>(null);
  const titleId = useId();
  const title = result.title || "Unknown Title";
  const id = shareIdOf(result);
  const match = matchPercent(result);
  const genres = genreList(result.genres);
  const runtime = formatRuntime(result.runtime);
  const key = trailerKey(result);
  const watchUrl = trailerWatchUrl(result);
  const cast = result.cast ?? [];
  const ts = result.timestamp;
  const alsoIn = result.alsoIn ?? [];
  const notice = detailsNotice(result, viewerIsAdmin());

  useEffect(() => {
    const heading = headingRef.current;
    if (!autoFocus || !heading) return;
    if (variant === "modal") {
      heading.focus();
      return;
    }
    // In the page, the fixed site header and the sticky result bar would cover a title that
    // the browser merely scrolls into view: bring the whole result to the top instead.
    heading.focus({ preventScroll: true });
    const bar = articleRef.current?.querySelector(".id-result-bar");
    const covered = (bar?.getBoundingClientRect().bottom ?? 0) + 8;
    const r = heading.getBoundingClientRect();
    const article = articleRef.current;
    if ((r.top < covered || r.bottom > window.innerHeight) && typeof article?.scrollIntoView === "function")
      article.scrollIntoView({ block: "start", behavior: "instant" });
  }, [autoFocus, result, variant]);

  // The owner may stop sharing the link (it then answers "no longer available") and turn
  // it back on by sharing again.
  const isOwner = result.isOwner === true;
  const [shared, setShared] = useState(result.shared !== false);
  const [sharingBusy, setSharingBusy] = useState(false);
  useEffect(() => setShared(result.shared !== false), [result]);

  const setSharing = async (on: boolean): Promise<boolean> => {
    if (!id) return false;
    setSharingBusy(true);
    try {
      await putJson(`/api/identification/${encodeURIComponent(id)}/sharing`, { shared: on });
      setShared(on);
      return true;
    } catch {
      toast({ title: "Error", description: "Could not change who can open this link. Please try again.", variant: "destructive" });
      return false;
    } finally {
      setSharingBusy(false);
    }
  };

  const onShare = async () => {
    if (!id) {
      toast({ title: "Share Failed", description: "Unable to share. Please try copying the link instead.", variant: "destructive" });
      return;
    }
    if (isOwner && !shared && !(await setSharing(true))) return;
    await shareResult(id, title);
  };

  const onStopSharing = async () => {
    if (await setSharing(false)) {
      toast({ title: "Link turned off", description: "People with the link can no longer open this result." });
    }
  };

  const onCollect = async () => {
    setAdding(true);
    const outcome = await addToCollection(result);
    setAdding(false);
    if (outcome === "added") {
      setSaved(true);
      toast({ title: "Added to Collection", description: `${title} was added to your collection.` });
      requestAchievementCheck();
    } else if (outcome === "signin") {
      toast({ title: "Sign in Required", description: "Please sign in to add titles to your collection.", variant: "destructive" });
    } else {
      toast({ title: "Error", description: "Failed to add to collection", variant: "destructive" });
    }
  };

  const tabs: TabDef[] = [{ id: "overview", label: "Overview", panel: <OverviewTab result={result} match={match} /> }];
  if (cast.length > 0) tabs.push({ id: "cast", label: "Cast", panel: <CastTab result={result} /> });
  if (key) tabs.push({ id: "trailer", label: "Trailer", panel: <TrailerTab result={result} videoKey={key} /> });
  if (hasMoreDetails(result) || result.audioAnalysisResults)
    tabs.push({ id: "details", label: "More Details", panel: <MoreDetailsTab result={result} /> });

  return (
    <article ref={articleRef} className={`id-result id-result-${variant}`} aria-labelledby={titleId} data-testid="result-view">
      <div className="id-result-bar">
        <button type="button" className="btn btn-ghost id-back" onClick={onBack}>
          <Icon name="back" size={18} /> <span className="id-back-label">{backLabel}</span>
        </button>
        <span className="id-badge-success">
          <Icon name="check" size={16} /> Successfully Identified
        </span>
        <button type="button" className="btn btn-ghost id-review-btn" onClick={() => setReviewOpen(true)}>
          <Icon name="message" size={18} />
          <span className="id-review-long">Share Experience</span>{" "}
          <span className="id-review-short">Review</span>
        </button>
      </div>

      {notice && (
        <div className="id-notice" role="note">
          <p>{notice.text}</p>
          {notice.adminHint && <p className="id-notice-admin">{notice.adminHint}</p>}
        </div>
      )}

      <div className="id-result-grid">
        <div className="id-result-main">
          <header className="id-hero">
            <Poster src={posterOf(result)} alt={`${title} poster`} className="id-hero-poster" />
            <div className="id-hero-body">
              <h2 id={titleId} className="id-title" ref={headingRef} tabIndex={-1}>
                {title}
              </h2>
              <p className="id-meta">
                {isTv(result) ? (
                  <span className="id-type">
                    <Icon name="tv" size={16} /> TV Show
                  </span>
                ) : (
                  <span className="id-type">
                    <Icon name="film" size={16} /> Movie
                  </span>
                )}
                {result.year != null && result.year !== "" && <span>{result.year}</span>}
                {runtime && <span>{runtime}</span>}
                {result.director && <span>Dir. {result.director}</span>}
                {result.season != null && (
                  <span>
                    Season {result.season}
                    {result.episode != null ? `, episode ${result.episode}` : ""}
                  </span>
                )}
              </p>
              {ts && typeof ts.at === "number" && (
                <p className="id-timestamp">
                  <Icon name="clock" size={16} /> Found at {formatClock(ts.at)}
                  {ts.to - ts.from >= LONG_SHOT_SECONDS && (
                    <span className="id-muted">
                      {" "}
                      (in the shot from {formatClock(ts.from)} to {formatClock(ts.to)})
                    </span>
                  )}
                </p>
              )}
              {alsoIn.length > 0 && (
                <p className="id-also-in">
                  The same scene is also in{" "}
                  {alsoIn.map((a, i) => (
                    <span key={i}>
                      {i > 0 && ", "}
                      {appearanceName(a)}
                      {a.timestamp ? ` at ${formatClock(a.timestamp.at)}` : ""}
                    </span>
                  ))}
                  .
                </p>
              )}
              {(result.previewUrl || (result.engine === "library" && ts)) && (
                <MatchedFrame url={result.previewUrl ?? null} at={ts ? formatClock(ts.at) : ""} />
              )}
              <div className="id-scores">
                <RatingStars rating={result.rating} />
                <span className="id-match" aria-label={`${match}% match`}>
                  {match}% match
                </span>
              </div>
              {genres.length > 0 && (
                <ul className="id-genres" aria-label="Genres">
                  {genres.map((g) => (
                    <li key={g} className="id-chip">
                      {g}
                    </li>
                  ))}
                </ul>
              )}
              <div className="id-actions">
                {watchUrl && (
                  <a
                    className="btn btn-primary"
                    href={watchUrl}
                    target="_blank"
                    rel="noopener noreferrer"
                    onClick={() => track("trailer_view", id, { title, source: "watch_button" })}
                  >
                    <Icon name="play" size={16} /> Watch Trailer
                  </a>
                )}
                <button type="button" className="btn btn-ghost" onClick={() => void onShare()} disabled={sharingBusy}>
                  <Icon name="share" size={16} /> Share
                </button>
                {isOwner && shared && (
                  <button type="button" className="btn btn-ghost" onClick={() => void onStopSharing()} disabled={sharingBusy}>
                    Stop Sharing
                  </button>
                )}
                <button type="button" className="btn btn-ghost" onClick={() => void onCollect()} disabled={adding} aria-busy={adding}>
                  {/* Saving again is harmless (the server keeps one item per title). */}
                  <Icon name={saved ? "check" : "plus"} size={16} /> {saved ? "In Your Collection" : "Add to Collection"}
                </button>
              </div>
            </div>
          </header>

          <MemoryNote result={result} />
          <AnswerFeedback result={result} onCorrected={onCorrected} />

          <Tabs tabs={tabs} selected={tab} onSelect={setTab} label={`About ${title}`} />
        </div>
        <aside className="id-result-side">
          <WhereToWatch result={result} />
        </aside>
      </div>

      <ReviewDialog
        open={reviewOpen}
        onClose={() => setReviewOpen(false)}
        identificationId={id}
        movieTitle={title}
      />
    </article>
  );
}

/**
 * The Library's picture of the matched moment. Said to be unavailable, not shown broken, when
 * the answering server has no link for it (the video file lives on another machine) or the
 * link no longer gives a picture (expired, file removed).
 */
function MatchedFrame({ url, at }: { url: string | null; at: string }) {
  const [failed, setFailed] = useState(false);
  if (!url || failed) {
    return <p className="id-preview-none id-muted">Preview unavailable</p>;
  }
  return <img className="id-preview" src={url} alt={`Matched frame at ${at}`} onError={() => setFailed(true)} />;
}
