/**
 * The verify-email screen (SPEC "Verify-email screen"): loading, then "Email Verified!"
 * with Continue to Login, or "Verification Failed" with Go to Login and a support link.
 * Props: `{ token, contactEmail? }`. The token is used once, even under StrictMode's
 * double effects, because the request is shared per token.
 */
import { useEffect, useState } from "react";
import { getJson } from "../lib/api";
import { isNetworkError, serverMessage } from "../accounts/shared";
import type { VerifyEmailProps } from "../generated/VerifyEmailProps";

type State = { kind: "loading" } | { kind: "success"; message: string } | { kind: "error"; message: string };

const requests = new Map<string, Promise<{ message?: string }>>();

/** One request per token for the life of the page. */
export function verifyOnce(token: string): Promise<{ message?: string }> {
  let p = requests.get(token);
  if (!p) {
    p = getJson<{ message?: string }>(`/api/verify-email/${encodeURIComponent(token)}`);
    requests.set(token, p);
  }
  return p;
}

export default function VerifyEmail({ token = "", contactEmail }: Partial<VerifyEmailProps>) {
  const [state, setState] = useState<State>(() =>
    token ? { kind: "loading" } : { kind: "error", message: "Invalid verification link" },
  );

  useEffect(() => {
    if (!token) return;
    let live = true;
    verifyOnce(token).then(
      (res) => live && setState({ kind: "success", message: res?.message ?? "Your email has been verified." }),
      (err: unknown) =>
        live &&
        setState({
          kind: "error",
          message: isNetworkError(err) ? "Network error. Please try again." : serverMessage(err, "Verification failed"),
        }),
    );
    return () => {
      live = false;
    };
  }, [token]);

  if (state.kind === "loading") {
    return (
      <div className="verify-state" aria-busy="true" aria-live="polite">
        <span className="auth-spinner" aria-hidden="true" />
        <h1>Verifying your email…</h1>
        <p>This takes a moment.</p>
      </div>
    );
  }
  if (state.kind === "success") {
    return (
      <div className="verify-state verify-success" aria-live="polite">
        <span className="verify-icon" aria-hidden="true">✓</span>
        <h1>Email Verified!</h1>
        <p>{state.message}</p>
        <a className="btn btn-primary" href="/auth">
          Continue to Login
        </a>
      </div>
    );
  }
  return (
    <div className="verify-state verify-error" role="alert">
      <span className="verify-icon" aria-hidden="true">!</span>
      <h1>Verification Failed</h1>
      <p>{state.message}</p>
      <a className="btn btn-primary" href="/auth">
        Go to Login
      </a>
      <p className="muted">
        Need help? <a href={contactEmail ? `mailto:${contactEmail}` : "/about"}>Contact support</a>
      </p>
    </div>
  );
}
