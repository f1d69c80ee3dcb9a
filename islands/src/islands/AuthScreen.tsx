/**
 * The sign-in / sign-up screen (SPEC "Auth screen", sections 4, 5 and 8). Props:
 * `AuthScreenProps` (generated from src/routes/accounts.rs). The server redirects signed-in
 * people away, renders plain forms underneath as the no-JavaScript fallback, and passes
 * `error` and `notice` codes from redirects (e.g. `google_unavailable`), which this island
 * shows as a toast.
 */
import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useId, useRef, useState, type FormEvent, type KeyboardEvent } from "react";
import { ApiError, postJson } from "../lib/api";
import { queryKeys, type CurrentUser } from "../lib/query";
import { clearFreeUsageCount } from "../lib/storage";
import { toastAfterNavigation } from "../lib/toast";
import { useToast } from "../lib/useToast";
import { AUTH_ERRORS, AUTH_NOTICES, isNetworkError, pendingUrl, serverMessage, signUpProblem } from "../accounts/shared";
import { WelcomeOnboarding, type OnboardingOutcome } from "../pwa/WelcomeOnboarding";
import type { AuthScreenProps } from "../generated/AuthScreenProps";
import type { AuthTab } from "../generated/AuthTab";

/** The welcome toast after the onboarding, by how it ended (SPEC 8). */
export function welcomeToast(siteName: string, username: string, outcome: OnboardingOutcome) {
  const hello = `Welcome to ${siteName}, ${username}!`;
  const more: Record<OnboardingOutcome, string> = {
    enabled: "Notifications are on.",
    failed: "Notifications could not be turned on; you can try again in PWA Settings.",
    declined: "You can turn on notifications any time in PWA Settings.",
  };
  return { title: "Account created!", description: `${hello} ${more[outcome]}` };
}

type Tab = AuthTab;

/** Navigation, swappable in unit tests. */
export const nav = { go: (url: string) => window.location.assign(url) };

function PasswordField(props: {
  id: string;
  label: string;
  value: string;
  onChange: (v: string) => void;
  autoComplete: string;
}) {
  const [shown, setShown] = useState(false);
  return (
    <div className="auth-field">
      <label htmlFor={props.id}>{props.label}</label>
      <div className="auth-password">
        <input
          id={props.id}
          type={shown ? "text" : "password"}
          value={props.value}
          autoComplete={props.autoComplete}
          onChange={(e) => props.onChange(e.target.value)}
        />
        <button
          type="button"
          className="auth-reveal"
          aria-pressed={shown}
          aria-label={shown ? `Hide ${props.label.toLowerCase()}` : `Show ${props.label.toLowerCase()}`}
          onClick={() => setShown((s) => !s)}
        >
          {shown ? "Hide" : "Show"}
        </button>
      </div>
    </div>
  );
}

function TextField(props: {
  id: string;
  label: string;
  value: string;
  onChange: (v: string) => void;
  type?: string;
  autoComplete: string;
}) {
  return (
    <div className="auth-field">
      <label htmlFor={props.id}>{props.label}</label>
      <input
        id={props.id}
        type={props.type ?? "text"}
        value={props.value}
        autoComplete={props.autoComplete}
        onChange={(e) => props.onChange(e.target.value)}
      />
    </div>
  );
}

export default function AuthScreen({ googleEnabled = false, error, notice, initialTab = "signin", siteName = "Reelfind" }: Partial<AuthScreenProps>) {
  const { toast } = useToast();
  const queryClient = useQueryClient();
  const [tab, setTab] = useState<Tab>(initialTab);
  const [busy, setBusy] = useState(false);
  const [signIn, setSignIn] = useState({ username: "", password: "" });
  const [signUp, setSignUp] = useState({ username: "", email: "", password: "", confirm: "" });
  // After registration: the welcome onboarding for this username, then home.
  const [welcome, setWelcome] = useState<string | null>(null);
  const id = useId();
  const tabRefs = { signin: useRef<HTMLButtonElement>(null), signup: useRef<HTMLButtonElement>(null) };

  // The toast about what is wrong with the form goes away when that is over: the fields no
  // longer have that problem, the other tab is chosen, or a submit goes ahead (an old "Weak
  // Password" must not stay up behind the welcome dialog).
  const problemToast = useRef<{ title: string; dismiss: () => void } | null>(null);
  const showProblem = (p: { title: string; description: string }) => {
    problemToast.current = { title: p.title, ...toast({ ...p, variant: "destructive" }) };
  };
  const clearProblem = (stillTitle?: string) => {
    if (problemToast.current && problemToast.current.title !== stillTitle) {
      problemToast.current.dismiss();
      problemToast.current = null;
    }
  };
  const signInProblem = (v: typeof signIn) =>
    !v.username.trim() || !v.password ? { title: "Missing Information", description: "Please enter both username and password" } : null;
  useEffect(() => {
    const current = tab === "signin" ? signInProblem(signIn) : signUpProblem(signUp);
    clearProblem(current?.title);
    // Runs when the fields or the tab change; the helpers read the ref.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [tab, signIn, signUp]);

  // A redirect brought an error code: say it once, then tidy the address bar.
  useEffect(() => {
    const known = error ? AUTH_ERRORS[error] : undefined;
    if (known) toast({ ...known, variant: "destructive" });
    if (error) {
      const url = new URL(window.location.href);
      url.searchParams.delete("error");
      window.history.replaceState(null, "", url.pathname + url.search + url.hash);
    }
  }, [error, toast]);

  // Likewise for a notice (a password reset, a deleted account).
  useEffect(() => {
    const known = notice ? AUTH_NOTICES[notice] : undefined;
    if (known) toast(known);
    if (notice) {
      const url = new URL(window.location.href);
      url.searchParams.delete("notice");
      window.history.replaceState(null, "", url.pathname + url.search + url.hash);
    }
  }, [notice, toast]);

  const signedIn = (user: CurrentUser) => {
    clearFreeUsageCount();
    queryClient.setQueryData(queryKeys.currentUser, user);
  };

  async function submitSignIn(e: FormEvent) {
    e.preventDefault();
    const problem = signInProblem(signIn);
    if (problem) {
      showProblem(problem);
      return;
    }
    clearProblem();
    setBusy(true);
    try {
      const user = await postJson<CurrentUser>("/api/login", { username: signIn.username.trim(), password: signIn.password });
      signedIn(user);
      nav.go("/");
    } catch (err) {
      setBusy(false);
      if (err instanceof ApiError && err.status === 403) {
        const body = err.json<{ emailVerificationRequired?: boolean; email?: string }>();
        if (body?.emailVerificationRequired && body.email) {
          nav.go(pendingUrl(body.email));
          return;
        }
      }
      const description = isNetworkError(err)
        ? "Network error. Please check your connection and try again."
        : serverMessage(err, "Login failed");
      showProblem({ title: "Login failed", description });
    }
  }

  async function submitSignUp(e: FormEvent) {
    e.preventDefault();
    const problem = signUpProblem(signUp);
    if (problem) {
      showProblem(problem);
      return;
    }
    clearProblem();
    setBusy(true);
    try {
      const res = await postJson<CurrentUser & { emailVerificationRequired?: boolean }>("/api/register", {
        username: signUp.username.trim(),
        email: signUp.email.trim(),
        password: signUp.password,
      });
      if (res.emailVerificationRequired) {
        nav.go(pendingUrl(String(res.email)));
        return;
      }
      signedIn(res);
      setWelcome(res.username);
    } catch (err) {
      setBusy(false);
      const description = isNetworkError(err)
        ? "Network error. Please check your connection and try again."
        : serverMessage(err, "Registration failed");
      showProblem({ title: "Registration failed", description });
    }
  }

  function onTabKey(e: KeyboardEvent) {
    if (e.key === "ArrowRight" || e.key === "ArrowLeft" || e.key === "Home" || e.key === "End") {
      e.preventDefault();
      const next: Tab = e.key === "Home" ? "signin" : e.key === "End" ? "signup" : tab === "signin" ? "signup" : "signin";
      setTab(next);
      tabRefs[next].current?.focus();
    }
  }

  const tabButton = (t: Tab, label: string) => (
    <button
      ref={tabRefs[t]}
      type="button"
      role="tab"
      id={`${id}-${t}-tab`}
      aria-selected={tab === t}
      aria-controls={`${id}-${t}-panel`}
      tabIndex={tab === t ? 0 : -1}
      className="auth-tab"
      onClick={() => setTab(t)}
      onKeyDown={onTabKey}
    >
      {label}
    </button>
  );

  const finishWelcome = (outcome: OnboardingOutcome) => {
    toastAfterNavigation(welcomeToast(siteName, welcome ?? signUp.username.trim(), outcome));
    nav.go("/");
  };

  return (
    <div className="auth-island" data-testid="auth-screen">
      {welcome !== null && <WelcomeOnboarding open username={welcome} siteName={siteName} onFinish={finishWelcome} />}
      <div className="auth-tabs" role="tablist" aria-label="Sign in or sign up">
        {tabButton("signin", "Sign In")}
        {tabButton("signup", "Sign Up")}
      </div>

      {tab === "signin" ? (
        <form
          className="auth-form"
          role="tabpanel"
          id={`${id}-signin-panel`}
          aria-labelledby={`${id}-signin-tab`}
          onSubmit={submitSignIn}
          noValidate
        >
          <TextField
            id={`${id}-si-user`}
            label="Username"
            value={signIn.username}
            autoComplete="username"
            onChange={(username) => setSignIn({ ...signIn, username })}
          />
          <PasswordField
            id={`${id}-si-pass`}
            label="Password"
            value={signIn.password}
            autoComplete="current-password"
            onChange={(password) => setSignIn({ ...signIn, password })}
          />
          <button className="btn btn-primary auth-submit" type="submit" disabled={busy}>
            {busy ? "Signing in..." : "Sign In"}
          </button>
          <p className="auth-links">
            <a href="/forgot-password">Forgot password?</a>
          </p>
        </form>
      ) : (
        <form
          className="auth-form"
          role="tabpanel"
          id={`${id}-signup-panel`}
          aria-labelledby={`${id}-signup-tab`}
          onSubmit={submitSignUp}
          noValidate
        >
          <TextField
            id={`${id}-su-user`}
            label="Username"
            value={signUp.username}
            autoComplete="username"
            onChange={(username) => setSignUp({ ...signUp, username })}
          />
          <TextField
            id={`${id}-su-email`}
            label="Email"
            type="email"
            value={signUp.email}
            autoComplete="email"
            onChange={(email) => setSignUp({ ...signUp, email })}
          />
          <PasswordField
            id={`${id}-su-pass`}
            label="Password"
            value={signUp.password}
            autoComplete="new-password"
            onChange={(password) => setSignUp({ ...signUp, password })}
          />
          <PasswordField
            id={`${id}-su-confirm`}
            label="Confirm Password"
            value={signUp.confirm}
            autoComplete="new-password"
            onChange={(confirm) => setSignUp({ ...signUp, confirm })}
          />
          <button className="btn btn-primary auth-submit" type="submit" disabled={busy}>
            {busy ? "Creating account..." : "Create Account"}
          </button>
        </form>
      )}

      <div className="auth-divider" role="separator">
        <span>or</span>
      </div>
      <button
        type="button"
        className="btn btn-ghost auth-google"
        onClick={() => nav.go("/api/auth/google")}
        data-google-enabled={googleEnabled ? "true" : "false"}
      >
        <svg viewBox="0 0 24 24" width="18" height="18" aria-hidden="true" focusable="false">
          <path fill="#4285F4" d="M22.5 12.3c0-.8-.1-1.5-.2-2.2H12v4.2h5.9a5 5 0 0 1-2.2 3.3v2.7h3.5c2.1-1.9 3.3-4.7 3.3-8z" />
          <path fill="#34A853" d="M12 23c3 0 5.5-1 7.3-2.7l-3.5-2.7c-1 .7-2.3 1.1-3.8 1.1-2.9 0-5.4-2-6.3-4.6H2.1v2.8A11 11 0 0 0 12 23z" />
          <path fill="#FBBC05" d="M5.7 14.1a6.6 6.6 0 0 1 0-4.2V7.1H2.1a11 11 0 0 0 0 9.8z" />
          <path fill="#EA4335" d="M12 5.4c1.6 0 3.1.6 4.2 1.7l3.2-3.2A11 11 0 0 0 2.1 7.1l3.6 2.8C6.6 7.3 9.1 5.4 12 5.4z" />
        </svg>
        Continue with Google
      </button>
    </div>
  );
}
