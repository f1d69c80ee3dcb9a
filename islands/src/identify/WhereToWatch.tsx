/**
 * The Where to Watch panel of the result view: the streaming, rent and buy offers with each
 * service's badge, links that open in a new tab (and are counted), and the provider's page
 * for more options.
 */
import { useId } from "react";
import { track } from "./api";
import { Icon } from "./icons";
import { platformInfo, shareIdOf, type IdentificationResult, type Platform } from "./result";

export function PlatformBadge({ name }: { name: string }) {
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
