/** A poster image that falls back to a placeholder icon when missing or broken. */
import { useEffect, useState } from "react";
import { Icon } from "./icons";

export function Poster({ src, alt, className }: { src: string | null | undefined; alt: string; className?: string }) {
  const [broken, setBroken] = useState(false);
  useEffect(() => setBroken(false), [src]);
  if (!src || broken) {
    return (
      <div
        className={`id-poster id-poster-placeholder ${className ?? ""}`}
        // A decorative poster (alt="") stays decorative without its picture.
        {...(alt ? { role: "img", "aria-label": `${alt} (no poster)` } : { "aria-hidden": true })}
      >
        <Icon name="film" size={40} />
      </div>
    );
  }
  return <img className={`id-poster ${className ?? ""}`} src={src} alt={alt} loading="lazy" onError={() => setBroken(true)} />;
}
