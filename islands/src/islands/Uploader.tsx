/**
 * The home hero's uploader (SPEC "Upload panel", "Upload error view", "Result view",
 * section 4 "Upload" and "Guest counter"): pick a file, choose an engine, identify; the
 * processing screen; the error view; the result view. `/?id=` loads a shared result.
 *
 * Props (src/routes/pages/home.rs `UploaderProps`): maxFileSizeMb, allowedFileTypes,
 * sharedId, signedIn.
 */
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useCallback, useEffect, useId, useLayoutEffect, useRef, useState, type DragEvent } from "react";
import { getJson } from "../lib/api";
import { modelsQuery, useModels, useSettings } from "../lib/query";
import { getFreeUsageCount, incrementFreeUsageCount, FREE_IDENTIFICATIONS } from "../lib/storage";
import { useToast } from "../lib/useToast";
import { fetchSharedIdentification, uploadIdentify } from "../identify/api";
import { availabilityKey, defaultEngine, engineDescription, engineName, engineOptions, stillAvailable } from "../identify/engines";
import { describeFailure, failureFromMessage, type IdentifyFailure } from "../identify/errors";
import { ErrorView } from "../identify/ErrorView";
import { Icon } from "../identify/icons";
import { Modal } from "../identify/Modal";
import { ResultView } from "../identify/ResultView";
import type { IdentificationResult } from "../identify/result";
import {
  acceptAttribute,
  expectedTime,
  isVideoFile,
  parseTypes,
  rulesFromSettings,
  timeoutMs,
  validateFile,
  type UploadRules,
} from "../identify/validate";

export interface UploaderProps {
  maxFileSizeMb?: number;
  allowedFileTypes?: string[];
  sharedId?: string | null;
  signedIn?: boolean;
}

type Phase = "idle" | "selected" | "processing" | "result" | "error" | "loadingShared";

/** Processing steps and when each starts (ms after the request starts). */
export const STEPS = [
  { label: "Analyzing media", at: 0 },
  { label: "Finding matches", at: 2000 },
  { label: "Finalizing results", at: 5000 },
] as const;

/** Files above this show an upload progress bar. */
const PROGRESS_THRESHOLD = 1024 * 1024;

function formatSize(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
  return `${Math.max(1, Math.round(bytes / 1024))} KB`;
}

export default function Uploader({ maxFileSizeMb, allowedFileTypes, sharedId, signedIn: signedInProp = false }: UploaderProps) {
  const { toast } = useToast();
  const settings = useSettings();
  const models = useModels();
  const queryClient = useQueryClient();
  // The server knows whether this page was rendered for a signed-in person.
  const signedIn = signedInProp;
  const prefs = useQuery({
    queryKey: ["/api/profiles/preferences"],
    queryFn: () => getJson<{ defaultAiModel?: string }>("/api/profiles/preferences"),
    enabled: signedIn,
    retry: false,
  });

  const rules: UploadRules | null =
    rulesFromSettings(settings.data) ??
    (maxFileSizeMb && allowedFileTypes?.length ? { maxMb: maxFileSizeMb, allowed: parseTypes(allowedFileTypes) } : null);

  const [phase, setPhase] = useState<Phase>(sharedId ? "loadingShared" : "idle");
  const [file, setFile] = useState<File | null>(null);
  const [preview, setPreview] = useState<string | null>(null);
  const [invalid, setInvalid] = useState<string | null>(null);
  const [dragging, setDragging] = useState(false);
  const [engine, setEngine] = useState<string>("auto");
  const engineTouched = useRef(false);
  const [useAudio, setUseAudio] = useState(true);
  const [progress, setProgress] = useState<{ loaded: number; total: number } | null>(null);
  const [uploaded, setUploaded] = useState(false);
  const [step, setStep] = useState(0);
  const [result, setResult] = useState<IdentificationResult | null>(null);
  const [fromShare, setFromShare] = useState(false);
  const [failure, setFailure] = useState<IdentifyFailure | null>(null);
  const [authOpen, setAuthOpen] = useState(false);
  const abortRef = useRef<AbortController | null>(null);
  const timers = useRef<ReturnType<typeof setTimeout>[]>([]);
  const inputRef = useRef<HTMLInputElement>(null);
  const rootRef = useRef<HTMLDivElement>(null);
  const processingRef = useRef<HTMLHeadingElement>(null);
  const inputId = useId();
  const engineGroup = useId();
  const hintId = useId();

  const isVideo = file ? isVideoFile(file) : false;

  // ---- engine default and availability changes (SPEC section 4 "Engine mode") ----
  const lastAvailability = useRef<string | null>(null);
  useEffect(() => {
    const m = models.data;
    if (!m) return;
    const key = availabilityKey(m);
    const before = lastAvailability.current;
    lastAvailability.current = key;
    if (before === null) return;
    if (before !== key) {
      toast({ title: "AI Models Updated", description: "The available AI engines have changed." });
      setEngine((cur) => (stillAvailable(cur, m) ? cur : m.available[m.recommended] ? m.recommended : "auto"));
    }
  }, [models.data, toast]);

  const prefsSettled = !signedIn || prefs.isFetched;
  useEffect(() => {
    const m = models.data;
    if (!m || engineTouched.current || !prefsSettled || settings.isPending) return;
    setEngine(defaultEngine(m, settings.data?.ai_primary_model, prefs.data?.defaultAiModel));
  }, [models.data, settings.data, settings.isPending, prefs.data, prefsSettled]);

  // ---- object URL of the image preview, revoked when replaced ----
  useEffect(() => {
    if (!file || isVideoFile(file) || typeof URL.createObjectURL !== "function") {
      setPreview(null);
      return;
    }
    const url = URL.createObjectURL(file);
    setPreview(url);
    return () => URL.revokeObjectURL(url);
  }, [file]);

  // ---- the result takes the hero's full width ----
  // A layout effect: it must apply before the result view's own effect measures where its
  // title is (that effect scrolls the result into view).
  useLayoutEffect(() => {
    const hero = rootRef.current?.closest(".hero");
    hero?.classList.toggle("hero--result", phase === "result");
    return () => hero?.classList.remove("hero--result");
  }, [phase]);

  const clearTimers = () => {
    for (const t of timers.current) clearTimeout(t);
    timers.current = [];
  };
  useEffect(() => () => {
    clearTimers();
    abortRef.current?.abort();
  }, []);

  // ---- shared link: /?id= ----
  useEffect(() => {
    if (!sharedId) return;
    const ctrl = new AbortController();
    setPhase("loadingShared");
    fetchSharedIdentification(sharedId, ctrl.signal)
      .then((r) => {
        setResult(r);
        setFromShare(true);
        setPhase("result");
      })
      .catch((error: unknown) => {
        if (ctrl.signal.aborted) return;
        const msg = error instanceof Error ? error.message : "Unable to load shared identification";
        setFailure(failureFromMessage(msg));
        setPhase("error");
      })
      .finally(() => {
        if (ctrl.signal.aborted) return;
        const url = new URL(location.href);
        url.searchParams.delete("id");
        history.replaceState(history.state, "", url.pathname + url.search + url.hash);
      });
    return () => ctrl.abort();
  }, [sharedId]);

  const pick = useCallback(
    (picked: File | null | undefined) => {
      if (!picked) return;
      const problem = validateFile(picked, rules);
      if (problem) {
        setInvalid(problem);
        return;
      }
      setInvalid(null);
      // Engine availability may have changed since the page loaded (stale after 30 s).
      void queryClient.prefetchQuery(modelsQuery);
      setFile(picked);
      setUseAudio(true);
      setFailure(null);
      setPhase("selected");
    },
    [rules, queryClient],
  );

  const reset = () => {
    clearTimers();
    abortRef.current?.abort();
    setFile(null);
    setInvalid(null);
    setResult(null);
    setFailure(null);
    setProgress(null);
    setFromShare(false);
    setPhase("idle");
    if (inputRef.current) inputRef.current.value = "";
    requestAnimationFrame(() => rootRef.current?.querySelector<HTMLElement>(".id-file-input")?.focus());
  };

  const identify = async () => {
    if (!file || phase === "processing") return;
    if (!signedIn && getFreeUsageCount() >= FREE_IDENTIFICATIONS) {
      setAuthOpen(true);
      return;
    }
    const video = isVideoFile(file);
    const audio = video && useAudio;
    setResult(null);
    setFailure(null);
    setProgress(null);
    setUploaded(false);
    setStep(0);
    setPhase("processing");
    clearTimers();
    for (const [i, s] of STEPS.entries()) if (i > 0) timers.current.push(setTimeout(() => setStep(i), s.at));
    const ctrl = new AbortController();
    abortRef.current = ctrl;
    requestAnimationFrame(() => processingRef.current?.focus());
    try {
      const r = await uploadIdentify({
        file,
        mode: engine,
        useAudioAnalysis: audio,
        signal: ctrl.signal,
        timeoutMs: timeoutMs(video, audio),
        onProgress: (loaded, total) => setProgress({ loaded, total }),
        onUploaded: () => setUploaded(true),
      });
      if (ctrl.signal.aborted) return;
      if (!signedIn) incrementFreeUsageCount();
      clearTimers();
      setResult(r);
      setFromShare(false);
      setPhase("result");
    } catch (error) {
      clearTimers();
      if (error instanceof DOMException && error.name === "AbortError") {
        // Cancel: back to the file-selected state.
        if (abortRef.current === ctrl) setPhase("selected");
        return;
      }
      const f = describeFailure(error, rules?.maxMb ?? 25);
      if (f.requiresAuth) {
        setPhase("selected");
        setAuthOpen(true);
        return;
      }
      setFailure(f);
      setPhase("error");
    } finally {
      if (abortRef.current === ctrl) abortRef.current = null;
    }
  };

  const cancel = () => {
    abortRef.current?.abort();
    clearTimers();
    setPhase("selected");
  };

  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setDragging(false);
    const files = e.dataTransfer?.files;
    if (!files || files.length === 0) return;
    if (files.length > 1) {
      setInvalid("Please drop only one file at a time.");
      return;
    }
    pick(files[0]);
  };

  const options = engineOptions(models.data, settings.data);
  const authModal = (
    <Modal
      open={authOpen}
      onClose={() => setAuthOpen(false)}
      title="Authentication Required"
      description="First trial complete! Create a free account or sign in to keep identifying movies and TV shows."
      className="id-auth-dialog"
    >
      <div className="island-dialog-actions">
        <button type="button" className="btn btn-ghost" onClick={() => setAuthOpen(false)}>
          Not now
        </button>
        <a className="btn btn-primary" href="/auth">
          Continue with Account
        </a>
      </div>
    </Modal>
  );

  let body;
  if (phase === "result" && result) {
    body = (
      <ResultView
        result={result}
        backLabel={fromShare ? "New Search" : "Identify Another"}
        onBack={reset}
      />
    );
  } else if (phase === "loadingShared") {
    body = (
      <div className="id-panel id-loading" role="status" aria-live="polite">
        <span className="id-spinner" aria-hidden="true" />
        <p>Loading shared identification...</p>
      </div>
    );
  } else if (phase === "error" && failure) {
    body = (
      <div className="id-panel">
        <ErrorView failure={failure} onRetry={file ? () => void identify() : undefined} onReset={reset} />
      </div>
    );
  } else if (phase === "processing" && file) {
    const showProgress = file.size > PROGRESS_THRESHOLD && progress && !uploaded;
    const pct = progress && progress.total ? Math.round((progress.loaded / progress.total) * 100) : 0;
    body = (
      <div className="id-panel id-processing" data-testid="processing">
        <div className="id-processing-icon" aria-hidden="true">
          <span className="id-spinner id-spinner-lg" />
        </div>
        <h2 className="id-panel-title" ref={processingRef} tabIndex={-1}>
          Identifying Your Scene
        </h2>
        <p className="id-muted">
          Expected time: {expectedTime(isVideo, isVideo && useAudio)}
        </p>
        <p className="id-processing-engine" data-testid="processing-engine">
          <Icon name="cpu" size={16} />
          <span>
            <strong>{engineName(engine, settings.data)}</strong>
            {engineDescription(engine, settings.data) && <span className="id-muted"> · {engineDescription(engine, settings.data)}</span>}
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
          <button type="button" className="btn btn-ghost" onClick={cancel}>
            Cancel
          </button>
          <button type="button" className="btn btn-primary" disabled aria-busy="true">
            <span className="id-spinner" aria-hidden="true" /> Analyzing...
          </button>
        </div>
      </div>
    );
  } else {
    body = (
      <div className="id-panel id-uploader">
        <h2 className="id-panel-title">Identify Any Movie or TV Show</h2>
        <ol className="id-flow">
          <li className="id-flow-step">
            <h3 className="id-flow-title">
              <span className="id-flow-num" aria-hidden="true">1</span> Upload a screenshot or clip
            </h3>
            {file ? (
              <div className="id-selected">
                {preview ? (
                  <img className="id-preview-img" src={preview} alt={`Preview of ${file.name}`} />
                ) : (
                  <div className="id-video-placeholder" role="img" aria-label={`Video file ${file.name}`}>
                    <Icon name={isVideo ? "video" : "image"} size={36} />
                    <span>Video selected</span>
                  </div>
                )}
                <p className="id-file-name">
                  <span>{file.name}</span> <span className="id-muted">{formatSize(file.size)}</span>
                </p>
              </div>
            ) : (
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
                  onChange={(e) => pick(e.currentTarget.files?.[0])}
                />
                <Icon name="upload" size={32} />
                <span className="id-drop-title">Drag and drop a file here, or click to browse</span>
                <span className="id-muted" id={hintId}>
                  {rules
                    ? `${rules.allowed.map((t) => t.toUpperCase()).join(", ")} up to ${rules.maxMb}MB`
                    : "Images or videos up to 25MB"}
                </span>
              </label>
            )}
            {invalid && (
              <p className="id-invalid" role="alert">
                <Icon name="alert" size={16} /> {invalid}
              </p>
            )}
          </li>

          <li className="id-flow-step">
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
                        name={engineGroup}
                        value={o.id}
                        checked={engine === o.id}
                        disabled={!o.available}
                        onChange={() => {
                          engineTouched.current = true;
                          setEngine(o.id);
                        }}
                      />
                      <span className="id-engine-text">
                        <span className="id-engine-name">{o.name}</span>
                        {o.description && <span className="id-engine-desc">{o.description}</span>}
                      </span>
                    </label>
                  ))}
              </div>
              {models.data && options.some((o) => !o.available && o.id !== "auto") && (
                <p className="id-muted id-engine-off-list">
                  Not configured on this server:{" "}
                  {options
                    .filter((o) => !o.available && o.id !== "auto")
                    .map((o) => o.name)
                    .join(", ")}
                </p>
              )}
              {models.data && !Object.values(models.data.available).some(Boolean) && (
                <p className="id-muted id-engine-none">
                  No AI engine is configured on this server yet. The administrator needs to add a provider key.
                </p>
              )}
            </fieldset>
            {file && isVideo && (
              <label className="id-check">
                <input type="checkbox" checked={useAudio} onChange={(e) => setUseAudio(e.currentTarget.checked)} />
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
              <button type="button" className="btn btn-ghost" onClick={reset} disabled={!file}>
                Change File
              </button>
              <button
                type="button"
                className="btn btn-primary"
                onClick={() => void identify()}
                disabled={!file}
              >
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

  return (
    <div ref={rootRef} className="id-root" data-phase={phase}>
      {/* Present from the start so screen readers hear the outcome when it arrives. */}
      <p className="id-sr-only" role="status" data-testid="identify-status">
        {phase === "result" && result
          ? `Successfully identified: ${result.title || "Unknown Title"}${result.year ? ` (${result.year})` : ""}`
          : ""}
      </p>
      {body}
      {authModal}
    </div>
  );
}
