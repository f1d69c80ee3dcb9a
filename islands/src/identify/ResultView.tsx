/**
 * The result view of SPEC "Result view": sticky header (back, Successfully Identified,
 * Share Experience), poster and facts, rating stars and match, actions (Watch Trailer,
 * Share, Add to Collection), the tabs Overview / Cast / Trailer / More Details, and the
 * Where to Watch panel. Used by the uploader, shared links and the history modal.
 */
import { useEffect, useId, useRef, useState } from "react";
import { useSettings } from "../lib/query";
import { useToast } from "../lib/useToast";
import { addToCollection, track } from "./api";
import { engineName } from "./engines";
import { Icon } from "./icons";
import { Poster } from "./Poster";

export { Poster };
import { ReviewDialog } from "./ReviewDialog";
import {
  awardTone,
  formatClock,
  formatRuntime,
  genreList,
  hasMoreDetails,
  isTv,
  matchPercent,
  MAX_AWARDS,
  MAX_CAST,
  MAX_SIMILAR,
  platformInfo,
  posterOf,
  ratingStars,
  parseRating,
  shareIdOf,
  trailerEmbedUrl,
  trailerKey,
  trailerWatchUrl,
  type IdentificationResult,
  type Platform,
} from "./result";
import { shareResult } from "./share";
import { Tabs, type TabDef } from "./Tabs";

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

export function RatingStars({ rating }: { rating: unknown }) {
  const stars = ratingStars(rating);
  const r = parseRating(rating);
  if (!stars || r === null) return null;
  const label = `Rated ${r.toFixed(1).replace(/\.0$/, "")} out of 10 (${stars.value.toFixed(1).replace(/\.0$/, "")} of 5 stars)`;
  return (
    <span className="id-stars" role="img" aria-label={label} data-full={stars.full} data-half={stars.half ? 1 : 0}>
      {Array.from({ length: stars.full }, (_, i) => (
        <span key={`f${i}`} className="id-star id-star-full" aria-hidden="true">
          <Icon name="star" size={16} />
        </span>
      ))}
      {stars.half && (
        <span className="id-star id-star-half" aria-hidden="true">
          <Icon name="star" size={16} />
          <span className="id-star-half-fill">
            <Icon name="star" size={16} />
          </span>
        </span>
      )}
      {Array.from({ length: stars.empty }, (_, i) => (
        <span key={`e${i}`} className="id-star id-star-empty" aria-hidden="true">
          <Icon name="star" size={16} />
        </span>
      ))}
      <span className="id-rating-number" aria-hidden="true">
        {r.toFixed(1)}
      </span>
    </span>
  );
}

function PlatformBadge({ name }: { name: string }) {
  const info = platformInfo(name);
  return (
    <span className="id-platform-badge" style={{ background: info.color }} aria-hidden="true" data-platform={info.key}>
      {info.letter}
    </span>
  );
}

function PlatformList({
  heading,
  items,
  fallbackUrl,
  onClick,
}: {
  heading: string;
  items: Platform[] | undefined;
  fallbackUrl: string | null;
  onClick: (name: string) => void;
}) {
  if (!items?.length) return null;
  return (
    <div className="id-watch-group">
      <h4 className="id-watch-heading">{heading}</h4>
      <ul className="id-platforms">
        {items.map((p, i) => {
          const info = platformInfo(p.name);
          const href = p.url || fallbackUrl;
          const body = (
            <>
              <PlatformBadge name={p.name} />
              <span className="id-platform-name">{info.name}</span>
              {href && <Icon name="external" size={14} className="id-platform-ext" />}
              {href && <span className="id-sr-only"> ({heading.toLowerCase()}, opens in a new tab)</span>}
            </>
          );
          return (
            <li key={`${p.name}-${i}`}>
              {href ? (
                <a
                  className="id-platform"
                  href={href}
                  target="_blank"
                  rel="noopener noreferrer"
                  style={{ ["--platform" as string]: info.color }}
                  onClick={() => onClick(info.name)}
                >
                  {body}
                </a>
              ) : (
                <span className="id-platform" style={{ ["--platform" as string]: info.color }}>
                  {body}
                </span>
              )}
            </li>
          );
        })}
      </ul>
    </div>
  );
}

export function WhereToWatch({ result }: { result: IdentificationResult }) {
  const sp = result.streamingPlatforms ?? {};
  const id = shareIdOf(result);
  const link = typeof sp.link === "string" && sp.link ? sp.link : null;
  const onClick = (platform: string) => track("click_streaming_link", id, { title: result.title ?? "", platform });
  const headingId = useId();
  const any = (sp.flatrate?.length ?? 0) + (sp.rent?.length ?? 0) + (sp.buy?.length ?? 0) > 0;
  return (
    <section className="id-card id-watch" aria-labelledby={headingId}>
      <h3 id={headingId} className="id-section-title">
        Where to Watch
      </h3>
      {any ? (
        <>
          <PlatformList heading="Stream with subscription" items={sp.flatrate} fallbackUrl={link} onClick={onClick} />
          <PlatformList heading="Rent" items={sp.rent} fallbackUrl={link} onClick={onClick} />
          <PlatformList heading="Buy" items={sp.buy} fallbackUrl={link} onClick={onClick} />
        </>
      ) : (
        <p className="id-muted">No streaming information is available for this title in your region yet.</p>
      )}
      {link && (
        <a
          className="id-more-link"
          href={link}
          target="_blank"
          rel="noopener noreferrer"
          onClick={() => onClick("more_options")}
        >
          More streaming options <Icon name="external" size={14} />
        </a>
      )}
    </section>
  );
}

function StreamingSummary({ result }: { result: IdentificationResult }) {
  const sp = result.streamingPlatforms ?? {};
  const names = Array.from(
    new Set([...(sp.flatrate ?? []), ...(sp.rent ?? []), ...(sp.buy ?? [])].map((p) => platformInfo(p.name).name)),
  );
  if (names.length === 0) return <p className="id-muted">Not currently available on the streaming services we know of.</p>;
  return (
    <ul className="id-genres" aria-label="Available on">
      {names.map((n) => (
        <li key={n} className="id-chip id-chip-platform">
          <PlatformBadge name={n} />
          {n}
        </li>
      ))}
    </ul>
  );
}

function Fact({ label, value }: { label: string; value: string | number | null | undefined }) {
  return (
    <div className="id-fact">
      <dt>{label}</dt>
      <dd>{value === null || value === undefined || value === "" ? "Unknown" : value}</dd>
    </div>
  );
}

/** "OpenAI GPT (gpt-4.1-mini)": the engine's display name from the settings, and the model. */
function EngineFact({ result }: { result: IdentificationResult }) {
  const settings = useSettings();
  if (!result.engine) return null;
  const name = engineName(result.engine, settings.data);
  return <Fact label="Engine" value={result.model ? `${name} (${result.model})` : name} />;
}

function Overview({ result, match }: { result: IdentificationResult; match: number }) {
  const audio = result.audioAnalysisResults as { summary?: string } | null | undefined;
  return (
    <div className="id-overview">
      <section>
        <h3 className="id-section-title">Plot Summary</h3>
        <p className="id-plot">{result.description || "No plot summary is available for this title."}</p>
      </section>
      <section>
        <h3 className="id-section-title">Streaming Platforms</h3>
        <StreamingSummary result={result} />
      </section>
      <section>
        <h3 className="id-section-title">Technical Information</h3>
        <dl className="id-facts">
          <Fact label="Language" value={result.language} />
          <Fact label="Country" value={result.country} />
          <Fact label="Rating" value={result.classification} />
          <Fact label="Confidence" value={`${match}%`} />
          <EngineFact result={result} />
        </dl>
      </section>
      {audio && typeof audio === "object" && audio.summary && (
        <p className="id-muted id-audio-inline">
          <Icon name="music" size={16} /> {audio.summary}
        </p>
      )}
    </div>
  );
}

function CastGrid({ result }: { result: IdentificationResult }) {
  const cast = (result.cast ?? []).slice(0, MAX_CAST);
  return (
    <ul className="id-cast">
      {cast.map((c, i) => (
        <li key={`${c.id ?? c.name}-${i}`} className="id-cast-member">
          {c.profileUrl ? (
            <CastPhoto src={c.profileUrl} name={c.name} />
          ) : (
            <span className="id-cast-photo id-cast-initial" aria-hidden="true">
              {(c.name.trim()[0] ?? "?").toUpperCase()}
            </span>
          )}
          <span className="id-cast-name">{c.name}</span>
          {c.character && <span className="id-cast-role">{c.character}</span>}
        </li>
      ))}
    </ul>
  );
}

function CastPhoto({ src, name }: { src: string; name: string }) {
  const [broken, setBroken] = useState(false);
  if (broken) {
    return (
      <span className="id-cast-photo id-cast-initial" aria-hidden="true">
        {(name.trim()[0] ?? "?").toUpperCase()}
      </span>
    );
  }
  return <img className="id-cast-photo" src={src} alt="" loading="lazy" onError={() => setBroken(true)} />;
}

function TrailerPanel({ result, videoKey }: { result: IdentificationResult; videoKey: string }) {
  const id = shareIdOf(result);
  const name = result.trailers?.find((t) => t.key === videoKey)?.name || `${result.title ?? "Title"} trailer`;
  useEffect(() => {
    track("trailer_view", id, { title: result.title ?? "", source: "embed" });
  }, [id, result.title]);
  return (
    <div className="id-trailer">
      <div className="id-trailer-frame">
        <iframe
          src={trailerEmbedUrl(videoKey)}
          title={`${result.title ?? "Title"}: ${name}`}
          allow="accelerometer; encrypted-media; gyroscope; picture-in-picture; fullscreen"
          allowFullScreen
          loading="lazy"
          referrerPolicy="strict-origin-when-cross-origin"
        />
      </div>
      <a
        className="id-more-link"
        href={`https://www.youtube.com/watch?v=${encodeURIComponent(videoKey)}`}
        target="_blank"
        rel="noopener noreferrer"
        onClick={() => track("trailer_external_click", id, { title: result.title ?? "" })}
      >
        Watch on YouTube <Icon name="external" size={14} />
      </a>
    </div>
  );
}

function MoreDetails({ result }: { result: IdentificationResult }) {
  const facts = result.funFacts ?? [];
  const similar = (result.similarMovies ?? []).slice(0, MAX_SIMILAR);
  const b = result.boxOffice;
  const awards = (result.awards ?? []).slice(0, MAX_AWARDS);
  return (
    <div className="id-more">
      {facts.length > 0 && (
        <section>
          <h3 className="id-section-title">Fun Facts</h3>
          <ul className="id-funfacts">
            {facts.map((f, i) => (
              <li key={i}>{f}</li>
            ))}
          </ul>
        </section>
      )}
      {similar.length > 0 && (
        <section>
          <h3 className="id-section-title">Similar Movies</h3>
          <ul className="id-similar">
            {similar.map((s, i) => (
              <li key={`${s.title}-${i}`} className="id-similar-item">
                <Poster src={s.posterUrl} alt={`${s.title} poster`} className="id-similar-poster" />
                <span className="id-similar-title">{s.title}</span>
                {s.year && <span className="id-muted">{s.year}</span>}
              </li>
            ))}
          </ul>
        </section>
      )}
      {b && (b.budget || b.worldwide || b.domestic) && (
        <section>
          <h3 className="id-section-title">Box Office Performance</h3>
          <dl className="id-facts id-boxoffice">
            {b.budget && <Fact label="Budget" value={b.budget} />}
            {b.domestic && <Fact label="Domestic" value={b.domestic} />}
            {b.worldwide && <Fact label="Worldwide" value={b.worldwide} />}
          </dl>
        </section>
      )}
      {awards.length > 0 && (
        <section>
          <h3 className="id-section-title">Awards &amp; Recognition</h3>
          <ul className="id-awards">
            {awards.map((a, i) => {
              const tone = awardTone(a.result);
              return (
                <li key={i} className={`id-award id-award-${tone}`} data-tone={tone}>
                  <span className="id-award-name">{a.name || a.category}</span>
                  <span className="id-muted">
                    {[a.organization || a.event, a.year].filter(Boolean).join(", ")}
                  </span>
                  {a.result && <span className={`id-award-result id-award-result-${tone}`}>{a.result}</span>}
                </li>
              );
            })}
          </ul>
        </section>
      )}
      {result.audioAnalysisResults ? (
        <section className="id-audio-note">
          <h3 className="id-section-title">Audio Analysis</h3>
          <p className="id-muted">
            <Icon name="music" size={16} /> Audio analysis data is available for this identification.
            {(result.audioAnalysisResults as { summary?: string }).summary
              ? ` ${(result.audioAnalysisResults as { summary?: string }).summary}`
              : ""}
          </p>
        </section>
      ) : null}
    </div>
  );
}

export function ResultView({ result, backLabel, onBack, autoFocus = true, variant = "page" }: ResultViewProps) {
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

  const onShare = async () => {
    if (!id) {
      toast({ title: "Share Failed", description: "Unable to share. Please try copying the link instead.", variant: "destructive" });
      return;
    }
    await shareResult(id, title);
  };

  const onCollect = async () => {
    setAdding(true);
    const outcome = await addToCollection(result);
    setAdding(false);
    if (outcome === "added") {
      setSaved(true);
      toast({ title: "Added to Collection", description: `${title} was added to your collection.` });
    } else if (outcome === "signin") {
      toast({ title: "Sign in Required", description: "Please sign in to add titles to your collection.", variant: "destructive" });
    } else {
      toast({ title: "Error", description: "Failed to add to collection", variant: "destructive" });
    }
  };

  const tabs: TabDef[] = [{ id: "overview", label: "Overview", panel: <Overview result={result} match={match} /> }];
  if (cast.length > 0) tabs.push({ id: "cast", label: "Cast", panel: <CastGrid result={result} /> });
  if (key) tabs.push({ id: "trailer", label: "Trailer", panel: <TrailerPanel result={result} videoKey={key} /> });
  if (hasMoreDetails(result) || result.audioAnalysisResults)
    tabs.push({ id: "details", label: "More Details", panel: <MoreDetails result={result} /> });

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

      {result.detailsUnavailable && result.notice && (
        <p className="id-notice" role="note">
          {result.notice}
        </p>
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
                  {formatClock(ts.from) !== formatClock(ts.to) && (
                    <span className="id-muted">
                      {" "}
                      (scene {formatClock(ts.from)}–{formatClock(ts.to)})
                    </span>
                  )}
                </p>
              )}
              {result.previewUrl && (
                <img className="id-preview" src={result.previewUrl} alt={`Matched frame at ${ts ? formatClock(ts.at) : ""}`} />
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
                <button type="button" className="btn btn-ghost" onClick={() => void onShare()}>
                  <Icon name="share" size={16} /> Share
                </button>
                <button type="button" className="btn btn-ghost" onClick={() => void onCollect()} disabled={adding} aria-busy={adding}>
                  {/* Saving again is harmless (the server keeps one item per title). */}
                  <Icon name={saved ? "check" : "plus"} size={16} /> {saved ? "In Your Collection" : "Add to Collection"}
                </button>
              </div>
            </div>
          </header>

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
