/**
 * The pending-verification screen (SPEC "Pending-verification screen"): the address,
 * next steps, and Resend Verification Email with a 60 s countdown ("Resend in Ns").
 * Props: `{ email }` (the server sends visitors without one to /auth).
 */
import { useEffect, useState } from "react";
import { ApiError, postJson } from "../lib/api";
import { useToast } from "../lib/useToast";
import { isNetworkError, RESEND_COOLDOWN_S, serverMessage } from "../accounts/shared";
import type { PendingVerificationProps } from "../generated/PendingVerificationProps";

export default function PendingVerification({ email = "" }: Partial<PendingVerificationProps>) {
  const { toast } = useToast();
  const [sending, setSending] = useState(false);
  const [cooldown, setCooldown] = useState(0);

  useEffect(() => {
    if (cooldown <= 0) return;
    const t = setTimeout(() => setCooldown((c) => c - 1), 1000);
    return () => clearTimeout(t);
  }, [cooldown]);

  async function resend() {
    if (!email || sending || cooldown > 0) return;
    setSending(true);
    try {
      await postJson("/api/resend-verification", { email });
      toast({ title: "Email Sent", description: `We sent a new verification link to ${email}.` });
      setCooldown(RESEND_COOLDOWN_S);
    } catch (err) {
      if (isNetworkError(err)) {
        toast({ title: "Network Error", description: "Please check your connection and try again.", variant: "destructive" });
      } else {
        toast({
          title: "Resend Failed",
          description: serverMessage(err, "Failed to resend verification email."),
          variant: "destructive",
        });
        if (err instanceof ApiError && err.status === 429) {
          const wait = Number(err.json<{ retryAfter?: number }>()?.retryAfter);
          setCooldown(Number.isFinite(wait) && wait > 0 ? Math.ceil(wait) : RESEND_COOLDOWN_S);
        }
      }
    } finally {
      setSending(false);
    }
  }

  const label = sending ? "Sending..." : cooldown > 0 ? `Resend in ${cooldown}s` : "Resend Verification Email";

  return (
    <div className="pending-island">
      <span className="verify-icon" aria-hidden="true">✉</span>
      <h1>Check Your Email</h1>
      <p>
        We sent a verification link to <strong data-testid="pending-email">{email}</strong>.
      </p>
      <h2>Next steps</h2>
      <ol className="pending-steps">
        <li>Open the email we just sent you.</li>
        <li>Click the verification link (it works once, for 24 hours).</li>
        <li>Sign in with your username and password.</li>
      </ol>
      <p className="muted">Nothing there? Check your spam folder, or ask for a new link.</p>
      <button type="button" className="btn btn-primary" onClick={resend} disabled={sending || cooldown > 0} aria-live="polite">
        {label}
      </button>
      <p>
        <a href="/auth">Back to Sign In</a>
      </p>
    </div>
  );
}
