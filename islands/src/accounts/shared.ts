/**
 * Small helpers shared by the account islands (AuthScreen, VerifyEmail,
 * PendingVerification, Profile).
 */
import { ApiError } from "../lib/api";

/** The sentence the server put in `{error}`, the raw body, or `fallback`. */
export function serverMessage(error: unknown, fallback: string): string {
  if (error instanceof ApiError) {
    const body = error.json<{ error?: unknown }>();
    if (body && typeof body.error === "string" && body.error) return body.error;
    if (error.body && !error.body.trimStart().startsWith("<")) return error.body;
    return fallback;
  }
  return fallback;
}

/** A failure to reach the server at all (fetch throws a TypeError), not an HTTP answer. */
export function isNetworkError(error: unknown): boolean {
  return !(error instanceof ApiError) && error instanceof TypeError;
}

/** The address of the pending-verification screen for `email`. */
export function pendingUrl(email: string): string {
  return `/email-verification-pending?email=${encodeURIComponent(email)}`;
}

/** Messages for the `?error=` codes the server sends back to /auth. */
export const AUTH_ERRORS: Record<string, { title: string; description: string }> = {
  google_unavailable: {
    title: "Authentication Error",
    description: "Google authentication is currently unavailable. Please try again later.",
  },
  google_failed: { title: "Authentication Error", description: "Google sign-in did not complete. Please try again." },
  invalid: { title: "Login failed", description: "Invalid username or password" },
  missing: { title: "Missing Information", description: "Please fill in all required fields" },
  taken: { title: "Registration failed", description: "That username or email is already registered" },
  weak: { title: "Weak Password", description: "Password must be at least 6 characters long" },
  mismatch: { title: "Password Mismatch", description: "Passwords do not match" },
  throttled: { title: "Login failed", description: "Too many login attempts. Please wait a few minutes and try again." },
  register_throttled: { title: "Registration failed", description: "Too many new accounts from your network. Please try again later." },
};

/** Messages for the `?notice=` codes the server sends to /auth. */
export const AUTH_NOTICES: Record<string, { title: string; description: string }> = {
  password_reset: { title: "Password changed", description: "Sign in with your new password." },
  password_reset_revoked: {
    title: "Password changed",
    description:
      "Sign in with your new password. Your API keys were revoked and notifications turned off on your devices; make new keys and turn notifications on again in your account settings when you need them.",
  },
  deleted: { title: "Account deleted", description: "Your account and its data have been deleted." },
};

/** Validation of the sign-up form (SPEC section 5): the first problem, or null. */
export function signUpProblem(f: { username: string; email: string; password: string; confirm: string }) {
  if (!f.username.trim() || !f.email.trim() || !f.password) {
    return { title: "Missing Information", description: "Please fill in all required fields" };
  }
  if (f.password !== f.confirm) return { title: "Password Mismatch", description: "Passwords do not match" };
  if (f.password.length < 6) return { title: "Weak Password", description: "Password must be at least 6 characters long" };
  return null;
}

/** Seconds of the resend cooldown (SPEC section 9). */
export const RESEND_COOLDOWN_S = 60;
