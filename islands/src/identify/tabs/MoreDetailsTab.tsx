/** The More Details tab of the result view: fun facts, similar titles, box office, awards and the audio note. */
import { Fact } from "../Fact";
import { Icon } from "../icons";
import { Poster } from "../Poster";
import { awardTone, MAX_AWARDS, MAX_SIMILAR, type IdentificationResult } from "../result";

export function MoreDetailsTab({ result }: { result: IdentificationResult }) {
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
