/** The Trailer tab of the result view: the embedded YouTube trailer (its view is counted) and a link to YouTube. */
import { useEffect } from "react";
import { track } from "../api";
import { Icon } from "../icons";
import { shareIdOf, trailerEmbedUrl, type IdentificationResult } from "../result";

export function TrailerTab({ result, videoKey }: { result: IdentificationResult; videoKey: string }) {
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
