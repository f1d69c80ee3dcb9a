/**
 * The uploader's first view (SPEC "Upload panel"): 1. the drop zone, or the chosen file with
 * its preview; 2. the engine list (and, for a video, whether to analyse its sound);
 * 3. Change File and Identify Now, with the guest's free-use note. The home page renders the
 * same view as server HTML (templates/home/index.html) until the visitor acts.
 */
import { useEffect, useId, useState, type DragEvent, type Ref } from "react";
import type { ModelsResponse } from "../../lib/query";
import { FREE_IDENTIFICATIONS, getFreeUsageCount } from "../../lib/storage";
import type { EngineOption } from "../engines";
import { Icon } from "../icons";
import { acceptAttribute, isVideoFile, type UploadRules } from "../validate";
import { formatSize } from "./format";

export const ONE_FILE_ONLY = "Please drop only one file at a time.";

interface PickerProps {
  file: File | null;
  /** The chosen image's object URL (usePreview). */
  preview: string | null;
  invalid: string | null;
  rules: UploadRules | null;
  inputRef: Ref<HTMLInputElement>;
  onPick: (file: File | undefined) => void;
  onRefuse: (message: string) => void;
  engine: string;
  options: EngineOption[];
  models: ModelsResponse | undefined;
  onEngine: (id: string) => void;
  useAudio: boolean;
  onAudio: (on: boolean) => void;
  signedIn: boolean;
  onReset: () => void;
  onIdentify: () => void;
}

/**
 * An object URL of an image file for its preview, revoked when the file changes. The
 * uploader holds it (not the picker), so coming back from processing shows the preview at
 * once instead of a placeholder for a frame.
 */
export function usePreview(file: File | null): string | null {
  const [preview, setPreview] = useState<string | null>(null);
  useEffect(() => {
    if (!file || isVideoFile(file) || typeof URL.createObjectURL !== "function") {
      setPreview(null);
      return;
    }
    const url = URL.createObjectURL(file);
    setPreview(url);
    return () => URL.revokeObjectURL(url);
  }, [file]);
  return preview;
}

function ChosenFile({ file, preview }: { file: File; preview: string | null }) {
  return (
    <div className="id-selected">
      {preview ? (
        <img className="id-preview-img" src={preview} alt={`Preview of ${file.name}`} />
      ) : (
        <div className="id-video-placeholder" role="img" aria-label={`Video file ${file.name}`}>
          <Icon name={isVideoFile(file) ? "video" : "image"} size={36} />
          <span>Video selected</span>
        </div>
      )}
      <p className="id-file-name">
        <span>{file.name}</span> <span className="id-muted">{formatSize(file.size)}</span>
      </p>
    </div>
  );
}

function DropZone({ rules, inputRef, onPick, onRefuse }: Pick<PickerProps, "rules" | "inputRef" | "onPick" | "onRefuse">) {
  const [dragging, setDragging] = useState(false);
  const inputId = useId();
  const hintId = useId();
  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setDragging(false);
    const files = e.dataTransfer?.files;
    if (!files || files.length === 0) return;
    if (files.length > 1) onRefuse(ONE_FILE_ONLY);
    else onPick(files[0]);
  };
  return (
    <label
      className={`id-drop ${dragging ? "is-dragging" : ""}`}
      onDragOver={(e) => {
        e.preventDefault();
        setDragging(true);
      }}
      onDragLeave={() => setDragging(false)}
      onDrop={onDrop}
    >
      <input
        ref={inputRef}
        id={inputId}
        type="file"
        className="id-file-input"
        accept={acceptAttribute(rules)}
        aria-describedby={hintId}
        onChange={(e) => onPick(e.currentTarget.files?.[0])}
      />
      <Icon name="upload" size={32} />
      <span className="id-drop-title">Drag and drop a file here, or click to browse</span>
      <span className="id-muted" id={hintId}>
        {rules ? `${rules.allowed.map((t) => t.toUpperCase()).join(", ")} up to ${rules.maxMb}MB` : "Images or videos up to 25MB"}
      </span>
    </label>
  );
}

function EngineList({ engine, options, models, onEngine }: Pick<PickerProps, "engine" | "options" | "models" | "onEngine">) {
  const group = useId();
  const unconfigured = options.filter((o) => !o.available && o.id !== "auto");
  return (
    <fieldset className="id-engines">
      <legend className="id-flow-title">
        <span className="id-flow-num" aria-hidden="true">2</span> Choose AI Engine
      </legend>
      <div className="id-engine-list">
        {options
          .filter((o) => o.available || o.id === engine)
          .map((o) => (
            <label key={o.id} className={`id-engine ${engine === o.id ? "is-selected" : ""} ${o.available ? "" : "is-disabled"}`}>
              <input
                type="radio"
                name={group}
                value={o.id}
                checked={engine === o.id}
                disabled={!o.available}
                onChange={() => onEngine(o.id)}
              />
              <span className="id-engine-text">
                <span className="id-engine-name">{o.name}</span>
                {o.description && <span className="id-engine-desc">{o.description}</span>}
              </span>
            </label>
          ))}
      </div>
      {models && unconfigured.length > 0 && (
        <p className="id-muted id-engine-off-list">Not configured on this server: {unconfigured.map((o) => o.name).join(", ")}</p>
      )}
      {models && !Object.values(models.available).some(Boolean) && (
        <p className="id-muted id-engine-none">
          No AI engine is configured on this server yet. The administrator needs to add a provider key.
        </p>
      )}
    </fieldset>
  );
}

export function Picker(props: PickerProps) {
  const { file, preview, invalid, useAudio, onAudio, signedIn, onReset, onIdentify } = props;
  return (
    <div className="id-panel id-uploader">
      <h2 className="id-panel-title">Identify Any Movie or TV Show</h2>
      <ol className="id-flow">
        <li className="id-flow-step">
          <h3 className="id-flow-title">
            <span className="id-flow-num" aria-hidden="true">1</span> Upload a screenshot or clip
          </h3>
          {file ? <ChosenFile file={file} preview={preview} /> : <DropZone {...props} />}
          {invalid && (
            <p className="id-invalid" role="alert">
              <Icon name="alert" size={16} /> {invalid}
            </p>
          )}
        </li>

        <li className="id-flow-step">
          <EngineList {...props} />
          {file && isVideoFile(file) && (
            <label className="id-check">
              <input type="checkbox" checked={useAudio} onChange={(e) => onAudio(e.currentTarget.checked)} />
              <span>
                Analyze audio too <span className="id-muted">(dialogue helps identify the scene; takes longer)</span>
              </span>
            </label>
          )}
        </li>

        <li className="id-flow-step">
          <h3 className="id-flow-title">
            <span className="id-flow-num" aria-hidden="true">3</span> Identify the Scene
          </h3>
          <div className="id-flow-actions">
            <button type="button" className="btn btn-ghost" onClick={onReset} disabled={!file}>
              Change File
            </button>
            <button type="button" className="btn btn-primary" onClick={onIdentify} disabled={!file}>
              <Icon name="spark" size={18} /> Identify Now
            </button>
          </div>
          {!signedIn && (
            <p className="id-muted id-guest-note">
              {getFreeUsageCount() >= FREE_IDENTIFICATIONS
                ? "You have used your free identification. Sign in to keep going."
                : "Your first identification is free, no account needed."}
            </p>
          )}
        </li>
      </ol>
    </div>
  );
}
