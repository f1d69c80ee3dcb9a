/**
 * The processing screen (SPEC "Upload panel"): expected time, the engine at work, an upload
 * progress bar for files over 1 MB until the upload is done, the three steps, and Cancel.
 */
import type { Ref } from "react";
import type { Settings } from "../../lib/query";
import { engineDescription, engineName } from "../engines";
import { Icon } from "../icons";
import { expectedTime, isVideoFile } from "../validate";
import { formatSize } from "./format";
import type { UploadState } from "./state";
import { STEPS } from "./useIdentifyRun";

/** Files above this show an upload progress bar. */
const PROGRESS_THRESHOLD = 1024 * 1024;

interface ProcessingPanelProps {
  file: File;
  state: Pick<UploadState, "progress" | "uploaded" | "step" | "useAudio">;
  engine: string;
  settings: Settings | undefined;
  onCancel: () => void;
  /** The heading, focused when processing starts. */
  headingRef: Ref<HTMLHeadingElement>;
}

export function ProcessingPanel({ file, state, engine, settings, onCancel, headingRef }: ProcessingPanelProps) {
  const { progress, uploaded, step, useAudio } = state;
  const isVideo = isVideoFile(file);
  const showProgress = file.size > PROGRESS_THRESHOLD && progress && !uploaded;
  const pct = progress && progress.total ? Math.round((progress.loaded / progress.total) * 100) : 0;
  const description = engineDescription(engine, settings);
  return (
    <div className="id-panel id-processing" data-testid="processing">
      <div className="id-processing-icon" aria-hidden="true">
        <span className="id-spinner id-spinner-lg" />
      </div>
      <h2 className="id-panel-title" ref={headingRef} tabIndex={-1}>
        Identifying Your Scene
      </h2>
      <p className="id-muted">Expected time: {expectedTime(isVideo, isVideo && useAudio)}</p>
      <p className="id-processing-engine" data-testid="processing-engine">
        <Icon name="cpu" size={16} />
        <span>
          <strong>{engineName(engine, settings)}</strong>
          {description && <span className="id-muted"> · {description}</span>}
        </span>
      </p>
      {showProgress && (
        <div className="id-progress">
          <label className="id-progress-label">
            Uploading {formatSize(progress.loaded)} of {formatSize(progress.total)}
            <progress max={100} value={pct}>
              {pct}%
            </progress>
          </label>
        </div>
      )}
      <ol className="id-steps" aria-live="polite">
        {STEPS.map((s, i) => (
          <li
            key={s.label}
            className={`id-step ${i < step ? "is-done" : i === step ? "is-active" : ""}`}
            aria-current={i === step ? "step" : undefined}
          >
            <span className="id-step-dot" aria-hidden="true">
              {i < step ? <Icon name="check" size={14} /> : i + 1}
            </span>
            {s.label}
            {i < step && <span className="id-sr-only"> (done)</span>}
          </li>
        ))}
      </ol>
      <div className="id-flow-actions">
        <button type="button" className="btn btn-ghost" onClick={onCancel}>
          Cancel
        </button>
        <button type="button" className="btn btn-primary" disabled aria-busy="true">
          <span className="id-spinner" aria-hidden="true" /> Analyzing...
        </button>
      </div>
    </div>
  );
}
