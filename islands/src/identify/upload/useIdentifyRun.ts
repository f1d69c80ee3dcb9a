/**
 * One identification request of the uploader: the guest's free-use check, the upload with
 * its progress, the processing steps on their timers, cancel, and the outcome as reducer
 * actions (state.ts). The request is aborted when the uploader goes away.
 */
import { useCallback, useEffect, useRef, type Dispatch } from "react";
import { FREE_IDENTIFICATIONS, getFreeUsageCount, incrementFreeUsageCount } from "../../lib/storage";
import { uploadIdentify } from "../api";
import { describeFailure } from "../errors";
import { isVideoFile, timeoutMs } from "../validate";
import type { UploadAction } from "./state";

/** Processing steps and when each starts (ms after the request starts). */
export const STEPS = [
  { label: "Analyzing media", at: 0 },
  { label: "Finding matches", at: 2000 },
  { label: "Finalizing results", at: 5000 },
] as const;

interface RunOptions {
  dispatch: Dispatch<UploadAction>;
  signedIn: boolean;
  /** The size limit the error view names when the server refuses a file as too large. */
  maxMb: number;
  /** A guest past the free identification, or the server asking for an account. */
  onNeedsAccount: () => void;
  /** Called as the request starts (prefetch the result view, move focus). */
  onStart: () => void;
}

export interface RunRequest {
  file: File;
  engine: string;
  useAudio: boolean;
}

export function useIdentifyRun({ dispatch, signedIn, maxMb, onNeedsAccount, onStart }: RunOptions) {
  const abortRef = useRef<AbortController | null>(null);
  const timers = useRef<ReturnType<typeof setTimeout>[]>([]);

  const clearTimers = useCallback(() => {
    for (const t of timers.current) clearTimeout(t);
    timers.current = [];
  }, []);

  /** Stops the request and the step timers without changing the phase (reset does). */
  const stop = useCallback(() => {
    clearTimers();
    abortRef.current?.abort();
  }, [clearTimers]);

  useEffect(() => stop, [stop]);

  const run = async ({ file, engine, useAudio }: RunRequest) => {
    if (!signedIn && getFreeUsageCount() >= FREE_IDENTIFICATIONS) {
      onNeedsAccount();
      return;
    }
    const video = isVideoFile(file);
    const audio = video && useAudio;
    dispatch({ type: "started" });
    onStart();
    clearTimers();
    for (const [i, s] of STEPS.entries()) if (i > 0) timers.current.push(setTimeout(() => dispatch({ type: "step", step: i }), s.at));
    const ctrl = new AbortController();
    abortRef.current = ctrl;
    try {
      const r = await uploadIdentify({
        file,
        mode: engine,
        useAudioAnalysis: audio,
        signal: ctrl.signal,
        timeoutMs: timeoutMs(video, audio),
        onProgress: (loaded, total) => dispatch({ type: "progress", loaded, total }),
        onUploaded: () => dispatch({ type: "uploaded" }),
      });
      if (ctrl.signal.aborted) return;
      if (!signedIn) incrementFreeUsageCount();
      clearTimers();
      dispatch({ type: "succeeded", result: r, fromShare: false });
    } catch (error) {
      clearTimers();
      if (error instanceof DOMException && error.name === "AbortError") {
        // Cancel: back to the file-selected state.
        if (abortRef.current === ctrl) dispatch({ type: "backToFile" });
        return;
      }
      const f = describeFailure(error, maxMb);
      if (f.requiresAuth) {
        dispatch({ type: "backToFile" });
        onNeedsAccount();
        return;
      }
      dispatch({ type: "failed", failure: f });
    } finally {
      if (abortRef.current === ctrl) abortRef.current = null;
    }
  };

  const cancel = () => {
    stop();
    dispatch({ type: "backToFile" });
  };

  return { run, cancel, stop };
}
