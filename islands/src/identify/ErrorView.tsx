/**
 * The upload error view (SPEC section 2 "Upload error view", section 8): the title and
 * advice of the error's kind, Try Again, Upload Different File, and the raw error under
 * "Technical details (for support)".
 */
import { useEffect, useRef, useState } from "react";
import type { IdentifyFailure } from "./errors";
import { Icon } from "./icons";

export function ErrorView({
  failure,
  onRetry,
  onReset,
}: {
  failure: IdentifyFailure;
  onRetry?: () => void;
  onReset: () => void;
}) {
  const headingRef = useRef<HTMLHeadingElement>(null);
  useEffect(() => headingRef.current?.focus(), [failure]);
  // A busy or rate-limited server said when to come back: Try Again waits that long.
  const [wait, setWait] = useState(failure.retryAfter);
  useEffect(() => {
    setWait(failure.retryAfter);
    if (failure.retryAfter <= 0) return;
    const started = Date.now();
    const timer = window.setInterval(() => {
      const left = failure.retryAfter - Math.floor((Date.now() - started) / 1000);
      setWait(Math.max(0, left));
      if (left <= 0) window.clearInterval(timer);
    }, 1000);
    return () => window.clearInterval(timer);
  }, [failure]);
  return (
    <section className="id-error" role="alert" aria-labelledby="id-error-title" data-kind={failure.kind} data-testid="error-view">
      <div className="id-error-icon" aria-hidden="true">
        <Icon name="alert" size={28} />
      </div>
      <h2 id="id-error-title" className="id-error-title" ref={headingRef} tabIndex={-1}>
        {failure.title}
      </h2>
      <p className="id-error-message">{failure.base}</p>
      {failure.hint && <p className="id-error-hint">{failure.hint}</p>}
      {failure.retryAfter > 0 && (
        <p className="id-error-hint">The server asked to wait {failure.retryAfter} seconds before the next try.</p>
      )}
      <ul className="id-error-advice">
        {failure.advice.map((a) => (
          <li key={a}>{a}</li>
        ))}
      </ul>
      <div className="id-error-actions">
        {onRetry && (
          <button type="button" className="btn btn-primary" onClick={onRetry} disabled={wait > 0} data-wait={wait}>
            {wait > 0 ? `Try Again in ${wait} s` : "Try Again"}
          </button>
        )}
        <button type="button" className="btn btn-ghost" onClick={onReset}>
          Upload Different File
        </button>
      </div>
      <details className="id-error-details">
        <summary>Technical details (for support)</summary>
        {/* It scrolls when the server's answer is long (max-height in identify.css), so it
            takes keyboard focus: arrow keys then scroll it (WCAG 2.1.1). */}
        <pre tabIndex={0} role="region" aria-label="Technical details">
          {failure.raw}
        </pre>
      </details>
    </section>
  );
}
