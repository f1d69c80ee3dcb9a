/** The Overview tab of the result view: plot, where it streams, and the technical facts. */
import { useSettings } from "../../lib/query";
import { engineName } from "../engines";
import { Fact } from "../Fact";
import { Icon } from "../icons";
import { platformInfo, type IdentificationResult } from "../result";
import { PlatformBadge } from "../WhereToWatch";

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

/** "OpenAI GPT (gpt-4.1-mini)": the engine's display name from the settings, and the model. */
function EngineFact({ result }: { result: IdentificationResult }) {
  const settings = useSettings();
  if (!result.engine) return null;
  const name = engineName(result.engine, settings.data);
  return <Fact label="Engine" value={result.model ? `${name} (${result.model})` : name} />;
}

export function OverviewTab({ result, match }: { result: IdentificationResult; match: number }) {
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
