/**
 * The uploader's phases and everything that changes with them, as one reducer: each thing
 * the visitor or the request does is one action, and which fields it clears is written once,
 * here, instead of in a row of setters at every call site.
 *
 * idle → selected (a valid file) → processing → result | error; cancel goes back to
 * selected; reset to idle from anywhere. A shared link (`/?id=`) starts in loadingShared.
 */
import type { IdentifyFailure } from "../errors";
import type { IdentificationResult } from "../result";

export type Phase = "idle" | "selected" | "processing" | "result" | "error" | "loadingShared";

export interface UploadState {
  phase: Phase;
  file: File | null;
  /** Why the last file picked or dropped was refused (shown under the drop zone). */
  invalid: string | null;
  /** Send the soundtrack of a video too (SPEC "useAudioAnalysis"); on again for each new file. */
  useAudio: boolean;
  progress: { loaded: number; total: number } | null;
  /** The whole file reached the server (the progress bar gives way to the steps). */
  uploaded: boolean;
  /** Index of the processing step shown as current. */
  step: number;
  result: IdentificationResult | null;
  /** The result came from a shared link (the back button says "New Search"). */
  fromShare: boolean;
  failure: IdentifyFailure | null;
}

export type UploadAction =
  | { type: "picked"; file: File }
  | { type: "refused"; message: string }
  | { type: "audio"; on: boolean }
  | { type: "started" }
  | { type: "progress"; loaded: number; total: number }
  | { type: "uploaded" }
  | { type: "step"; step: number }
  | { type: "succeeded"; result: IdentificationResult; fromShare: boolean }
  | { type: "failed"; failure: IdentifyFailure }
  /** Cancelled, or the server asked for an account: back to the chosen file. */
  | { type: "backToFile" }
  | { type: "loadingShared" }
  | { type: "reset" };

export function initialUploadState(sharedId: string | null | undefined): UploadState {
  return {
    phase: sharedId ? "loadingShared" : "idle",
    file: null,
    invalid: null,
    useAudio: true,
    progress: null,
    uploaded: false,
    step: 0,
    result: null,
    fromShare: false,
    failure: null,
  };
}

export function uploadReducer(state: UploadState, action: UploadAction): UploadState {
  switch (action.type) {
    case "picked":
      return { ...state, file: action.file, invalid: null, useAudio: true, failure: null, phase: "selected" };
    case "refused":
      return { ...state, invalid: action.message };
    case "audio":
      return { ...state, useAudio: action.on };
    case "started":
      return { ...state, result: null, failure: null, progress: null, uploaded: false, step: 0, phase: "processing" };
    case "progress":
      return { ...state, progress: { loaded: action.loaded, total: action.total } };
    case "uploaded":
      return { ...state, uploaded: true };
    case "step":
      return { ...state, step: action.step };
    case "succeeded":
      return { ...state, result: action.result, fromShare: action.fromShare, phase: "result" };
    case "failed":
      return { ...state, failure: action.failure, phase: "error" };
    case "backToFile":
      return { ...state, phase: "selected" };
    case "loadingShared":
      return { ...state, phase: "loadingShared" };
    case "reset":
      return { ...state, file: null, invalid: null, result: null, failure: null, progress: null, fromShare: false, phase: "idle" };
  }
}
