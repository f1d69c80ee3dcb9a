/**
 * The Profile island's "API keys" tab: make a key with a name, see it once (with a copy
 * button, and a selectable field where the clipboard is out of reach), list the live keys
 * (name, visible prefix, created, last used) and revoke one after a confirmation.
 * What happens is announced in a polite live region; focus goes to the new key after
 * creating and to the list's heading after revoking (the button that opened the dialog
 * is gone by then).
 *
 * Calls: GET /api/keys, POST /api/keys, DELETE /api/keys/{id}, GET /api/me/quota.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useId, useRef, useState, type FormEvent } from "react";
import { ApiError, deleteJson, getJson, postJson } from "../lib/api";
import { Modal } from "../identify/Modal";
import { isNetworkError, serverMessage } from "./shared";

export interface ApiKeyView {
  id: number;
  name: string;
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
}

export interface CreatedApiKey extends ApiKeyView {
  key: string;
}

interface Usage {
  limit: number;
  used: number;
  remaining: number;
}

export interface QuotaReport {
  perMinute: Usage;
  perDay: Usage;
  concurrent: { limit: number; inUse: number };
}

export const KEYS_KEY = ["/api/keys"] as const;
export const QUOTA_KEY = ["/api/me/quota"] as const;
/** Same bound as the server (`MAX_NAME_CHARS`). */
export const MAX_NAME = 80;

/**
 * Focuses `el` and brings it fully into view: a plain focus() leaves an element that is
 * already inside the viewport where it is, even under the fixed site header; scrollIntoView
 * honours the page's scroll-padding, which keeps clear of the header.
 */
export function focusInView(el: HTMLElement | null | undefined) {
  if (!el) return;
  el.focus({ preventScroll: true });
  el.scrollIntoView?.({ block: "nearest" });
}

function shortDate(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? "unknown date" : d.toLocaleDateString(undefined, { year: "numeric", month: "short", day: "numeric" });
}

/** What went wrong, in words a person can act on. */
export function keyErrorMessage(error: unknown, fallback: string): string {
  if (isNetworkError(error)) return "Reelfind could not be reached. Check your connection and try again.";
  if (error instanceof ApiError) {
    if (error.status === 401) return "You have been signed out. Sign in again to manage your API keys.";
    if (error.status === 429) {
      const said = serverMessage(error, "");
      return said || "Too many requests. Please wait a while and try again.";
    }
    if (error.status >= 500) return fallback;
  }
  return serverMessage(error, fallback);
}

/** The copy button's state: idle, copied, or the clipboard refused (select by hand). */
type CopyState = "idle" | "copied" | "manual";

function NewKey({ created, onDone, announce }: { created: CreatedApiKey; onDone: () => void; announce: (m: string) => void }) {
  const id = useId();
  const headingRef = useRef<HTMLHeadingElement>(null);
  const fieldRef = useRef<HTMLInputElement>(null);
  const [copy, setCopy] = useState<CopyState>("idle");

  useEffect(() => {
    focusInView(headingRef.current);
  }, [created.id]);

  async function copyKey() {
    try {
      if (!navigator.clipboard?.writeText) throw new Error("no clipboard");
      await navigator.clipboard.writeText(created.key);
      setCopy("copied");
      announce("Key copied to the clipboard.");
    } catch {
      setCopy("manual");
      focusInView(fieldRef.current);
      fieldRef.current?.select();
      announce("The key could not be copied automatically. It is selected: copy it with your keyboard.");
    }
  }

  return (
    <div className="apikey-new" role="region" aria-labelledby={`${id}-h`}>
      <h4 id={`${id}-h`} ref={headingRef} tabIndex={-1}>
        Copy your new key now
      </h4>
      <p>
        This is the only time the whole key for <strong>{created.name}</strong> is shown. Store it somewhere safe, such as your
        program's secret settings. If you lose it, revoke it and create another.
      </p>
      <label htmlFor={`${id}-key`}>Your new API key</label>
      <div className="apikey-copy-row">
        <input
          id={`${id}-key`}
          ref={fieldRef}
          className="apikey-secret"
          readOnly
          value={created.key}
          spellCheck={false}
          autoComplete="off"
          onFocus={(e) => e.currentTarget.select()}
          aria-describedby={copy === "manual" ? `${id}-manual` : undefined}
        />
        <button type="button" className="btn btn-primary" onClick={() => void copyKey()}>
          {copy === "copied" ? "Copied" : "Copy Key"}
        </button>
      </div>
      {copy === "copied" && (
        <p className="apikey-copied">
          <span aria-hidden="true">✓ </span>Copied to your clipboard.
        </p>
      )}
      {copy === "manual" && (
        <p id={`${id}-manual`} className="apikey-manual">
          Your browser did not allow copying. The key is selected in the field above: press Ctrl+C (⌘C on a Mac) to copy it.
        </p>
      )}
      <button type="button" className="btn btn-ghost" onClick={onDone}>
        Done, I Saved It
      </button>
    </div>
  );
}

function QuotaLine() {
  const q = useQuery({ queryKey: QUOTA_KEY, queryFn: () => getJson<QuotaReport>("/api/me/quota") });
  if (!q.data) return null;
  const { perMinute, perDay, concurrent } = q.data;
  return (
    <p className="muted apikey-quota">
      Your keys share one quota: {perMinute.limit} requests a minute, {perDay.limit} a day ({perDay.used} used today) and{" "}
      {concurrent.limit} at once.
    </p>
  );
}

/** The whole tab. */
export function ApiKeys() {
  const queryClient = useQueryClient();
  const id = useId();
  const nameRef = useRef<HTMLInputElement>(null);
  const listHeadingRef = useRef<HTMLHeadingElement>(null);
  const [name, setName] = useState("");
  const [formError, setFormError] = useState<string | null>(null);
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  const [confirming, setConfirming] = useState<ApiKeyView | null>(null);
  const [revokeError, setRevokeError] = useState<string | null>(null);
  const [announcement, setAnnouncement] = useState("");
  const [focusList, setFocusList] = useState(0);
  const keys = useQuery({ queryKey: KEYS_KEY, queryFn: () => getJson<{ keys: ApiKeyView[] }>("/api/keys") });

  // A fresh string each time, so the same sentence twice is announced twice.
  const announce = (m: string) => setAnnouncement((prev) => (prev === m ? `${m}\u00a0` : m));

  // After a revoke: runs after the dialog has closed and given focus back (to nothing: its
  // opener left the list), so this is where focus lands.
  useEffect(() => {
    if (focusList) focusInView(listHeadingRef.current);
  }, [focusList]);

  const create = useMutation({
    mutationFn: (n: string) => postJson<CreatedApiKey>("/api/keys", { name: n }),
    onSuccess: (key) => {
      setCreated(key);
      setName("");
      setFormError(null);
      const view: ApiKeyView = { id: key.id, name: key.name, prefix: key.prefix, createdAt: key.createdAt, lastUsedAt: key.lastUsedAt };
      queryClient.setQueryData<{ keys: ApiKeyView[] }>(KEYS_KEY, (old) => ({ keys: [view, ...(old?.keys ?? []).filter((k) => k.id !== view.id)] }));
      void queryClient.invalidateQueries({ queryKey: KEYS_KEY });
      announce(`Key “${key.name}” created. Copy it now: it is shown only once.`);
    },
    onError: (err) => {
      const m = keyErrorMessage(err, "The key could not be created. Please try again.");
      setFormError(m);
      focusInView(nameRef.current);
    },
  });

  const revoke = useMutation({
    mutationFn: (k: ApiKeyView) => deleteJson(`/api/keys/${k.id}`),
    onSuccess: (_, k) => {
      queryClient.setQueryData<{ keys: ApiKeyView[] }>(KEYS_KEY, (old) => ({ keys: (old?.keys ?? []).filter((x) => x.id !== k.id) }));
      void queryClient.invalidateQueries({ queryKey: KEYS_KEY });
      if (created?.id === k.id) setCreated(null);
      setConfirming(null);
      setRevokeError(null);
      announce(`Key “${k.name}” revoked. Programs using it are refused from now on.`);
      setFocusList((n) => n + 1);
    },
    onError: (err, k) => {
      // Already gone (revoked elsewhere): the list is out of date, not the person's fault.
      if (err instanceof ApiError && err.status === 404) {
        void queryClient.invalidateQueries({ queryKey: KEYS_KEY });
        setConfirming(null);
        announce(`Key “${k.name}” was already revoked.`);
        setFocusList((n) => n + 1);
        return;
      }
      setRevokeError(keyErrorMessage(err, "The key could not be revoked. Please try again."));
    },
  });

  function submit(e: FormEvent) {
    e.preventDefault();
    const n = name.trim();
    if (!n) {
      setFormError("Give the key a name, for example the program that will use it.");
      focusInView(nameRef.current);
      return;
    }
    create.mutate(n);
  }

  function doneWithNewKey() {
    setCreated(null);
    focusInView(nameRef.current);
  }

  function closeConfirm() {
    setConfirming(null);
    setRevokeError(null);
  }

  const list = keys.data?.keys ?? [];
  return (
    <div className="apikeys">
      <p className="apikeys-intro">
        API keys let your own programs and scripts use Reelfind: identify a screenshot or clip, read your history and results, and
        check your quota. Send a key in the <code>Authorization: Bearer</code> header. See the <a href="/docs/api">API reference</a>{" "}
        for examples.
      </p>
      <QuotaLine />

      <section className="settings-section" aria-labelledby={`${id}-create-h`}>
        <h3 id={`${id}-create-h`}>Create a key</h3>
        <form className="profile-form apikey-form" onSubmit={submit} noValidate>
          <label htmlFor={`${id}-name`}>Key name</label>
          <input
            id={`${id}-name`}
            ref={nameRef}
            value={name}
            maxLength={MAX_NAME}
            autoComplete="off"
            aria-invalid={formError ? true : undefined}
            aria-describedby={formError ? `${id}-name-hint ${id}-name-err` : `${id}-name-hint`}
            onChange={(e) => setName(e.target.value)}
          />
          <p id={`${id}-name-hint`} className="muted field-hint">
            What the key is for, such as “Home server script”. At most {MAX_NAME} characters.
          </p>
          {formError && (
            <p id={`${id}-name-err`} className="apikey-error" role="alert">
              {formError}
            </p>
          )}
          <button className="btn btn-primary" type="submit" disabled={create.isPending} aria-busy={create.isPending}>
            {create.isPending ? "Creating..." : "Create Key"}
          </button>
        </form>
        {created && <NewKey created={created} onDone={doneWithNewKey} announce={announce} />}
      </section>

      <section className="settings-section" aria-labelledby={`${id}-list-h`}>
        <h3 id={`${id}-list-h`} ref={listHeadingRef} tabIndex={-1}>
          Your keys
        </h3>
        {keys.isPending && (
          <p className="muted" aria-busy="true">
            Loading your keys...
          </p>
        )}
        {keys.isError && <p className="apikey-error">{keyErrorMessage(keys.error, "Your keys could not be loaded. Please reload the page.")}</p>}
        {keys.isSuccess && list.length === 0 && <p className="muted">You have no API keys yet.</p>}
        {list.length > 0 && (
          <ul className="session-list apikey-list" aria-labelledby={`${id}-list-h`}>
            {list.map((k) => (
              <li key={k.id} className="session-item apikey-item">
                <div className="apikey-meta">
                  <strong className="apikey-name">{k.name}</strong>
                  <span className="visually-hidden">, starts with </span>
                  <code className="apikey-prefix">{k.prefix}…</code>
                  <p className="muted">
                    Created {shortDate(k.createdAt)} · {k.lastUsedAt ? `last used ${shortDate(k.lastUsedAt)}` : "never used"}
                  </p>
                </div>
                <button type="button" className="btn btn-ghost" aria-label={`Revoke ${k.name}`} onClick={() => setConfirming(k)}>
                  Revoke
                </button>
              </li>
            ))}
          </ul>
        )}
      </section>

      <div className="visually-hidden" role="status" aria-live="polite" aria-atomic="true">
        {announcement}
      </div>

      <Modal
        open={confirming !== null}
        onClose={closeConfirm}
        title="Revoke this key?"
        description={
          confirming ? `Programs using “${confirming.name}” (${confirming.prefix}…) will be refused from the next request. This cannot be undone.` : undefined
        }
        busy={revoke.isPending}
      >
        {revokeError && (
          <p className="apikey-error" role="alert">
            {revokeError}
          </p>
        )}
        <div className="island-dialog-actions">
          <button type="button" className="btn btn-ghost" onClick={closeConfirm} disabled={revoke.isPending}>
            Cancel
          </button>
          <button
            type="button"
            className="btn btn-danger"
            disabled={revoke.isPending}
            aria-busy={revoke.isPending}
            onClick={() => confirming && revoke.mutate(confirming)}
          >
            {revoke.isPending ? "Revoking..." : "Revoke Key"}
          </button>
        </div>
      </Modal>
    </div>
  );
}
