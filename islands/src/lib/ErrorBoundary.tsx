/**
 * The error screen of SPEC "Layout", around every island: "Something went wrong", a
 * friendly message, Try Again (reads "Retrying..." during the 1 s wait), Go to Home and
 * Report Bug. After a retry it shows "Retry attempt N of 3"; after 3 retries Try Again is
 * gone and the text asks to refresh or contact support. It starts over when `resetKeys`
 * change.
 */
import { Component, type ErrorInfo, type ReactNode } from "react";
import { friendlyMessage } from "./errors";
import { logError, newId } from "./log";

export const MAX_RETRIES = 3;
export const RETRY_DELAY_MS = 1000;
export const BUG_REPORT_COPIED = "Bug report copied to clipboard. Please paste it when contacting support.";
export const PERSISTS_TEXT = "If this problem persists, please refresh the page or contact support.";

export interface BugReport {
  errorId: string;
  message: string;
  stack: string | undefined;
  userAgent: string;
  time: string;
  url: string;
}

export interface ErrorBoundaryProps {
  children: ReactNode;
  /** When any of these change, a shown error is cleared and the retry count starts over. */
  resetKeys?: readonly unknown[];
  /** Which island or screen this guards; goes into the log. */
  source?: string;
  onError?: (error: Error, info: ErrorInfo) => void;
}

interface State {
  error: Error | null;
  errorId: string | null;
  retryCount: number;
  retrying: boolean;
}

const initial: State = { error: null, errorId: null, retryCount: 0, retrying: false };

function changed(a: readonly unknown[] = [], b: readonly unknown[] = []): boolean {
  return a.length !== b.length || a.some((v, i) => !Object.is(v, b[i]));
}

export class ErrorBoundary extends Component<ErrorBoundaryProps, State> {
  override state: State = initial;
  private timer: ReturnType<typeof setTimeout> | undefined;

  static getDerivedStateFromError(error: unknown): Partial<State> {
    const err = error instanceof Error ? error : new Error(String(error));
    return { error: err, errorId: newId("err"), retrying: false };
  }

  override componentDidCatch(error: Error, info: ErrorInfo): void {
    logError(error.message, this.props.source ?? "island", error);
    // The analytics tag's exception event (lib/analyticsTag.ts listens when a tag is configured).
    window.dispatchEvent(new CustomEvent("reelfind:exception", { detail: { description: error.message, fatal: true } }));
    this.props.onError?.(error, info);
  }

  override componentDidUpdate(prev: ErrorBoundaryProps): void {
    if (changed(prev.resetKeys, this.props.resetKeys) && (this.state.error || this.state.retryCount)) {
      clearTimeout(this.timer);
      this.setState(initial);
    }
  }

  override componentWillUnmount(): void {
    clearTimeout(this.timer);
  }

  private retry = () => {
    if (this.state.retrying || this.state.retryCount >= MAX_RETRIES) return;
    this.setState({ retrying: true });
    this.timer = setTimeout(() => {
      this.setState((s) => ({ error: null, errorId: null, retrying: false, retryCount: s.retryCount + 1 }));
    }, RETRY_DELAY_MS);
  };

  private goHome = () => {
    window.location.assign("/");
  };

  bugReport(): BugReport {
    const { error, errorId } = this.state;
    return {
      errorId: errorId ?? "",
      message: error?.message ?? "",
      stack: error?.stack,
      userAgent: navigator.userAgent,
      time: new Date().toISOString(),
      url: window.location.href,
    };
  }

  private reportBug = async () => {
    const text = JSON.stringify(this.bugReport(), null, 2);
    try {
      await navigator.clipboard.writeText(text);
      window.alert(BUG_REPORT_COPIED);
    } catch (error) {
      logError("Could not copy the bug report", "error-boundary", error);
      window.alert(`Could not copy the bug report automatically. Please include this when contacting support:\n\n${text}`);
    }
  };

  override render(): ReactNode {
    const { error, retryCount, retrying } = this.state;
    if (!error) return this.props.children;
    const exhausted = retryCount >= MAX_RETRIES;
    return (
      <section className="error-screen" role="alert" aria-labelledby={`${this.state.errorId}-title`}>
        <div className="error-screen-icon" aria-hidden="true">
          <svg viewBox="0 0 24 24" width="28" height="28">
            <path d="M12 3l10 18H2z" fill="none" stroke="currentColor" strokeWidth="2" strokeLinejoin="round" />
            <path d="M12 10v5M12 18v.01" stroke="currentColor" strokeWidth="2" strokeLinecap="round" />
          </svg>
        </div>
        <h2 className="error-screen-title" id={`${this.state.errorId}-title`}>
          Something went wrong
        </h2>
        <p className="error-screen-message">{friendlyMessage(error)}</p>
        {retryCount > 0 && (
          <p className="error-screen-retries">
            Retry attempt {retryCount} of {MAX_RETRIES}
          </p>
        )}
        {exhausted && <p className="error-screen-persist">{PERSISTS_TEXT}</p>}
        <div className="error-screen-actions">
          {!exhausted && (
            <button type="button" className="btn btn-primary" onClick={this.retry} disabled={retrying} aria-busy={retrying}>
              {retrying ? "Retrying..." : "Try Again"}
            </button>
          )}
          <button type="button" className="btn btn-ghost" onClick={this.goHome}>
            Go to Home
          </button>
          <button type="button" className="btn btn-ghost" onClick={() => void this.reportBug()}>
            Report Bug
          </button>
        </div>
      </section>
    );
  }
}
