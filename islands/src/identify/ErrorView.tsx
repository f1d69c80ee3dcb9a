/**
 * The upload error view (SPEC section 2 "Upload error view", section 8): the title and
 * advice of the error's kind, Try Again, Upload Different File, and the raw error under
 * "Technical details (for support)".
 */
import { useEffect, useRef } from "react";
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
      <ul className="id-error-advice">
        {failure.advice.map((a) => (
          <li key={a}>{a}</li>
        ))}
      </ul>
      <div className="id-error-actions">
        {onRetry && (
          <button type="button" className="btn btn-primary" onClick={onRetry}>
            Try Again
          </button>
        )}
        <button type="button" className="btn btn-ghost" onClick={onReset}>
          Upload Different File
        </button>
      </div>
      <details className="id-error-details">
        <summary>Technical details (for support)</summary>
        <pre>{failure.raw}</pre>
      </details>
    </section>
  );
}
