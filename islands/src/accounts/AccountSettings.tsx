/**
 * The account half of the Profile island's Settings tab: change password, where you're
 * signed in (sign out one session or everywhere else), download your data, delete the
 * account. The same things work without JavaScript on the server page `/account`.
 *
 * Calls: POST /api/account/password, GET /api/account/sessions,
 * DELETE /api/account/sessions/{id}, POST /api/account/sessions/revoke-others,
 * GET /api/account/export (a download), POST /api/account/delete.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import { deleteJson, getJson, postJson } from "../lib/api";
import { clearFreeUsageCount } from "../lib/storage";
import { toastAfterNavigation } from "../lib/toast";
import { useToast } from "../lib/useToast";
import { Modal } from "../identify/Modal";
import { serverMessage } from "./shared";

export interface SessionView {
  id: string;
  createdAt: string;
  lastSeenAt: string;
  expiresAt: string;
  userAgent: string | null;
  device: string;
  current: boolean;
}

export const SESSIONS_KEY = ["/api/account/sessions"] as const;

function shortDate(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? "Unknown date" : d.toLocaleDateString(undefined, { year: "numeric", month: "short", day: "numeric" });
}

/** Where to go once the session is gone. */
function leave(to: string) {
  window.location.assign(to);
}

export function ChangePassword({ hasPassword, email }: { hasPassword: boolean; email: string }) {
  const { toast } = useToast();
  const queryClient = useQueryClient();
  const id = useId();
  const [f, setF] = useState({ current: "", next: "", confirm: "" });
  const change = useMutation({
    mutationFn: () =>
      postJson<{ message: string; signedOutSessions: number; revokedApiKeys: number; removedPushDevices: number }>("/api/account/password", {
        currentPassword: f.current,
        newPassword: f.next,
        confirmPassword: f.confirm,
      }),
    onSuccess: (r) => {
      setF({ current: "", next: "", confirm: "" });
      void queryClient.invalidateQueries({ queryKey: SESSIONS_KEY });
      // The server's sentence says how many API keys and push devices ended with the sessions.
      toast({ title: "Password changed", description: r.message.replace(/^Your password has been changed\. /, "") });
    },
    onError: (err) => toast({ title: "Password not changed", description: serverMessage(err, "Failed to change your password."), variant: "destructive" }),
  });

  if (!hasPassword) {
    return (
      <p>
        Your account signs in with Google and has no password. To add one, use <a href="/forgot-password">Forgot password</a> with {email}.
      </p>
    );
  }

  function submit(e: FormEvent) {
    e.preventDefault();
    if (!f.current || !f.next) {
      toast({ title: "Missing Information", description: "Please fill in all required fields", variant: "destructive" });
      return;
    }
    if (f.next !== f.confirm) {
      toast({ title: "Password Mismatch", description: "Passwords do not match", variant: "destructive" });
      return;
    }
    if (f.next.length < 6) {
      toast({ title: "Weak Password", description: "Password must be at least 6 characters long", variant: "destructive" });
      return;
    }
    change.mutate();
  }

  return (
    <form className="profile-form" onSubmit={submit} noValidate>
      <label htmlFor={`${id}-cur`}>Current password</label>
      <input id={`${id}-cur`} type="password" autoComplete="current-password" value={f.current} onChange={(e) => setF({ ...f, current: e.target.value })} />
      <label htmlFor={`${id}-new`}>New password</label>
      <input id={`${id}-new`} type="password" autoComplete="new-password" value={f.next} onChange={(e) => setF({ ...f, next: e.target.value })} aria-describedby={`${id}-hint`} />
      <label htmlFor={`${id}-confirm`}>Confirm new password</label>
      <input id={`${id}-confirm`} type="password" autoComplete="new-password" value={f.confirm} onChange={(e) => setF({ ...f, confirm: e.target.value })} />
      <p id={`${id}-hint`} className="muted field-hint">
        At least 6 characters. Changing your password signs you out on every other device.
      </p>
      <button className="btn btn-primary" type="submit" disabled={change.isPending}>
        {change.isPending ? "Changing..." : "Change Password"}
      </button>
    </form>
  );
}

export function Sessions() {
  const { toast } = useToast();
  const queryClient = useQueryClient();
  const q = useQuery({ queryKey: SESSIONS_KEY, queryFn: () => getJson<SessionView[]>("/api/account/sessions") });
  const revoke = useMutation({
    mutationFn: (s: SessionView) => deleteJson(`/api/account/sessions/${encodeURIComponent(s.id)}`),
    onSuccess: (_, s) => {
      if (s.current) {
        leave("/auth");
        return;
      }
      void queryClient.invalidateQueries({ queryKey: SESSIONS_KEY });
      toast({ title: "Signed out", description: `${s.device} has been signed out.` });
    },
    onError: (err) => toast({ title: "Error", description: serverMessage(err, "Failed to sign out that session."), variant: "destructive" }),
  });
  const others = useMutation({
    mutationFn: () => postJson<{ signedOutSessions: number }>("/api/account/sessions/revoke-others", {}),
    onSuccess: (r) => {
      void queryClient.invalidateQueries({ queryKey: SESSIONS_KEY });
      const n = r.signedOutSessions;
      toast({ title: "Signed out everywhere else", description: n === 1 ? "1 other session was signed out." : `${n} other sessions were signed out.` });
    },
    onError: (err) => toast({ title: "Error", description: serverMessage(err, "Failed to sign out your other sessions."), variant: "destructive" }),
  });

  if (q.isPending) return <p className="muted" aria-busy="true">Loading your sessions...</p>;
  if (q.isError) return <p className="muted">Your sessions could not be loaded. Please try again.</p>;
  const list = q.data;
  return (
    <>
      <ul className="session-list" aria-label="Signed-in sessions">
        {list.map((s) => (
          <li key={s.id} className="session-item">
            <div>
              <strong>{s.device}</strong>
              {s.current && <span className="session-current">This device</span>}
              <p className="muted">
                Signed in {shortDate(s.createdAt)} · last active {shortDate(s.lastSeenAt)}
              </p>
            </div>
            <button type="button" className="btn btn-ghost" onClick={() => revoke.mutate(s)} disabled={revoke.isPending}>
              {s.current ? "Sign Out" : "Sign Out Device"}
            </button>
          </li>
        ))}
      </ul>
      {list.length > 1 && (
        <button type="button" className="btn btn-ghost" onClick={() => others.mutate()} disabled={others.isPending}>
          {others.isPending ? "Signing out..." : "Sign Out Everywhere Else"}
        </button>
      )}
    </>
  );
}

export function DeleteAccount({ hasPassword, username }: { hasPassword: boolean; username: string }) {
  const { toast } = useToast();
  const queryClient = useQueryClient();
  const id = useId();
  const [open, setOpen] = useState(false);
  const [secret, setSecret] = useState("");
  const del = useMutation({
    mutationFn: () => postJson("/api/account/delete", hasPassword ? { password: secret } : { confirm: secret }),
    onSuccess: () => {
      queryClient.clear();
      clearFreeUsageCount();
      toastAfterNavigation({ title: "Account deleted", description: "Your account and its data have been deleted." });
      leave("/");
    },
    onError: (err) => toast({ title: "Account not deleted", description: serverMessage(err, "Failed to delete your account."), variant: "destructive" }),
  });
  const close = () => {
    setOpen(false);
    setSecret("");
  };
  return (
    <>
      <p>This deletes your account, your identification history and its share links, your collection, reviews and notification devices. It cannot be undone.</p>
      <button type="button" className="btn btn-danger" onClick={() => setOpen(true)}>
        Delete My Account
      </button>
      <Modal
        open={open}
        onClose={close}
        title="Delete your account?"
        description="This action cannot be undone. Your account and everything in it will be permanently deleted."
        busy={del.isPending}
      >
        <form
          className="profile-form"
          onSubmit={(e) => {
            e.preventDefault();
            if (!secret) return;
            del.mutate();
          }}
        >
          <label htmlFor={`${id}-secret`}>{hasPassword ? "Your password" : `Type your username (${username}) to confirm`}</label>
          <input
            id={`${id}-secret`}
            type={hasPassword ? "password" : "text"}
            autoComplete={hasPassword ? "current-password" : "off"}
            value={secret}
            onChange={(e) => setSecret(e.target.value)}
          />
          <div className="island-dialog-actions">
            <button type="button" className="btn btn-ghost" onClick={close} disabled={del.isPending}>
              Cancel
            </button>
            <button type="submit" className="btn btn-danger" disabled={del.isPending || !secret} aria-busy={del.isPending}>
              {del.isPending ? "Deleting..." : "Delete Account"}
            </button>
          </div>
        </form>
      </Modal>
    </>
  );
}

/** The sections below the profile form in the Settings tab. */
export function AccountSettings({ hasPassword, username, email }: { hasPassword: boolean; username: string; email: string }) {
  return (
    <>
      <section className="settings-section" aria-labelledby="settings-password">
        <h3 id="settings-password">Password</h3>
        <ChangePassword hasPassword={hasPassword} email={email} />
      </section>
      <section className="settings-section" aria-labelledby="settings-sessions">
        <h3 id="settings-sessions">Where you're signed in</h3>
        <Sessions />
      </section>
      <section className="settings-section" aria-labelledby="settings-data">
        <h3 id="settings-data">Your data</h3>
        <p>Download everything we keep about you: your account, history, collection, reviews, devices and settings, as one JSON file.</p>
        <a className="btn btn-ghost" href="/api/account/export" download>
          Download My Data
        </a>
      </section>
      <section className="settings-section settings-danger" aria-labelledby="settings-delete">
        <h3 id="settings-delete">Delete account</h3>
        <DeleteAccount hasPassword={hasPassword} username={username} />
      </section>
    </>
  );
}
