/**
 * The home hero's uploader (SPEC "Upload panel", "Upload error view", "Result view",
 * section 4 "Upload" and "Guest counter"): pick a file, choose an engine, identify; the
 * processing screen; the error view; the result view. `/?id=` loads a shared result.
 *
 * Props (`UploaderProps`, generated from src/routes/pages/home.rs): maxFileSizeMb, allowedFileTypes,
 * sharedId, signedIn, initialSettings and initialModels (the answers of /api/settings and
 * /api/models when the page was rendered), and from the runtime `handover`: on the home
 * page the server renders this island's first view as HTML and the island mounts when the
 * visitor picks or drops a file or changes the engine there (`data-island-load="interaction"`);
 * it starts from what they did.
 *
 * The parts live in identify/upload/: the phases as one reducer (state.ts), the request
 * (useIdentifyRun), the engine choice (useEngineChoice), and the views: the picker, the
 * processing panel and the guest dialog.
 */
import { useQueryClient } from "@tanstack/react-query";
import { Suspense, lazy, useCallback, useEffect, useLayoutEffect, useReducer, useRef, useState } from "react";
import { queryKeys, modelsQuery, useModels, useSettings } from "../lib/query";
import { fetchSharedIdentification } from "../identify/api";
import { engineOptions } from "../identify/engines";
import { failureFromMessage } from "../identify/errors";
import { ErrorView } from "../identify/ErrorView";
import { GuestDialog } from "../identify/upload/GuestDialog";
import { ONE_FILE_ONLY, Picker, usePreview } from "../identify/upload/Picker";
import { ProcessingPanel } from "../identify/upload/ProcessingPanel";
import { initialUploadState, uploadReducer } from "../identify/upload/state";
import { useEngineChoice } from "../identify/upload/useEngineChoice";
import { useIdentifyRun } from "../identify/upload/useIdentifyRun";
import { FALLBACK_MAX_MB, parseTypes, rulesFromSettings, validateFile, type UploadRules } from "../identify/validate";
import type { UploaderProps } from "../generated/UploaderProps";

export { STEPS } from "../identify/upload/useIdentifyRun";

/** What the server sends (each prop optional: the island works without any), and `handover` from the runtime. */
type Props = Partial<UploaderProps> & { handover?: { files?: File[]; values?: Record<string, string> } };

/**
 * The result view (tabs, trailer, review dialog: about a third of this island's code) is
 * fetched when an identification starts or a shared result loads, not with the page.
 */
const loadResultView = () => import("../identify/ResultView");
const ResultView = lazy(() => loadResultView().then((m) => ({ default: m.ResultView })));

function LoadingPanel({ text }: { text: string }) {
  return (
    <div className="id-panel id-loading" role="status" aria-live="polite">
      <span className="id-spinner" aria-hidden="true" />
      <p>{text}</p>
    </div>
  );
}

export default function Uploader({
  maxFileSizeMb,
  allowedFileTypes,
  sharedId,
  // The server knows whether this page was rendered for a signed-in person.
  signedIn = false,
  initialSettings,
  initialModels,
  handover,
}: Props) {
  const queryClient = useQueryClient();
  // The server's answers start the cache (once), so the first render matches its HTML.
  useState(() => {
    if (initialSettings && !queryClient.getQueryData(queryKeys.settings)) queryClient.setQueryData(queryKeys.settings, initialSettings);
    if (initialModels && !queryClient.getQueryData(queryKeys.models)) queryClient.setQueryData(queryKeys.models, initialModels);
  });
  const settings = useSettings();
  const models = useModels();
  const { engine, choose } = useEngineChoice({
    models: models.data,
    settings: settings.data,
    settingsPending: settings.isPending,
    signedIn,
  });

  const rules: UploadRules | null =
    rulesFromSettings(settings.data) ??
    (maxFileSizeMb && allowedFileTypes?.length ? { maxMb: maxFileSizeMb, allowed: parseTypes(allowedFileTypes) } : null);

  const [state, dispatch] = useReducer(uploadReducer, sharedId, initialUploadState);
  const { phase, file, result, failure } = state;
  const preview = usePreview(file);
  const [authOpen, setAuthOpen] = useState(false);
  const inputRef = useRef<HTMLInputElement>(null);
  const rootRef = useRef<HTMLDivElement>(null);
  const processingRef = useRef<HTMLHeadingElement>(null);

  const { run, cancel, stop } = useIdentifyRun({
    dispatch,
    signedIn,
    maxMb: rules?.maxMb ?? FALLBACK_MAX_MB,
    onNeedsAccount: () => setAuthOpen(true),
    onStart: () => {
      void loadResultView();
      requestAnimationFrame(() => processingRef.current?.focus());
    },
  });

  // ---- the result takes the hero's full width ----
  // A layout effect: it must apply before the result view's own effect measures where its
  // title is (that effect scrolls the result into view).
  useLayoutEffect(() => {
    const hero = rootRef.current?.closest(".hero");
    hero?.classList.toggle("hero--result", phase === "result");
    return () => hero?.classList.remove("hero--result");
  }, [phase]);

  // ---- shared link: /?id= ----
  useEffect(() => {
    if (!sharedId) return;
    void loadResultView();
    const ctrl = new AbortController();
    dispatch({ type: "loadingShared" });
    fetchSharedIdentification(sharedId, ctrl.signal)
      .then((r) => dispatch({ type: "succeeded", result: r, fromShare: true }))
      .catch((error: unknown) => {
        if (ctrl.signal.aborted) return;
        const msg = error instanceof Error ? error.message : "Unable to load shared identification";
        dispatch({ type: "failed", failure: failureFromMessage(msg) });
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
        dispatch({ type: "refused", message: problem });
        return;
      }
      // Engine availability may have changed since the page loaded (stale after 30 s).
      void queryClient.prefetchQuery(modelsQuery);
      dispatch({ type: "picked", file: picked });
    },
    [rules, queryClient],
  );
  // What the visitor did to the server-rendered first view before this island took over.
  const handedOver = useRef(false);
  useEffect(() => {
    if (handedOver.current || !handover) return;
    handedOver.current = true;
    const chosen = handover.values?.engine;
    if (chosen) choose(chosen);
    const files = handover.files ?? [];
    if (files.length > 1) dispatch({ type: "refused", message: ONE_FILE_ONLY });
    else if (files.length === 1) pick(files[0]);
  }, [handover, pick, choose]);

  const reset = () => {
    stop();
    dispatch({ type: "reset" });
    if (inputRef.current) inputRef.current.value = "";
    requestAnimationFrame(() => rootRef.current?.querySelector<HTMLElement>(".id-file-input")?.focus());
  };

  const identify = () => {
    if (!file || phase === "processing") return;
    void run({ file, engine, useAudio: state.useAudio });
  };

  let body;
  if (phase === "result" && result) {
    body = (
      <Suspense fallback={<LoadingPanel text="Loading result..." />}>
        <ResultView result={result} backLabel={state.fromShare ? "New Search" : "Identify Another"} onBack={reset} />
      </Suspense>
    );
  } else if (phase === "loadingShared") {
    body = <LoadingPanel text="Loading shared identification..." />;
  } else if (phase === "error" && failure) {
    body = (
      <div className="id-panel">
        <ErrorView failure={failure} onRetry={file ? identify : undefined} onReset={reset} />
      </div>
    );
  } else if (phase === "processing" && file) {
    body = (
      <ProcessingPanel file={file} state={state} engine={engine} settings={settings.data} onCancel={cancel} headingRef={processingRef} />
    );
  } else {
    body = (
      <Picker
        file={file}
        preview={preview}
        invalid={state.invalid}
        rules={rules}
        inputRef={inputRef}
        onPick={pick}
        onRefuse={(message) => dispatch({ type: "refused", message })}
        engine={engine}
        options={engineOptions(models.data, settings.data)}
        models={models.data}
        onEngine={choose}
        useAudio={state.useAudio}
        onAudio={(on) => dispatch({ type: "audio", on })}
        signedIn={signedIn}
        onReset={reset}
        onIdentify={identify}
      />
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
      <GuestDialog open={authOpen} onClose={() => setAuthOpen(false)} />
    </div>
  );
}
