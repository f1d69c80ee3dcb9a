/** The Cast tab of the result view: photos (or initials) with names and characters. */
import { useState } from "react";
import { MAX_CAST, type IdentificationResult } from "../result";

export function CastTab({ result }: { result: IdentificationResult }) {
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
