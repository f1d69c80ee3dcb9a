/**
 * `/pwa-settings`: the installable app and push notifications. Props `{ signedIn, siteName }`.
 *
 * - App: the service worker's status (SPEC 4: none, installing, waiting, active, error),
 *   a check for updates, "Reload to update" when a new version waits, and the install
 *   button when the browser offers installation.
 * - Notifications (signed-in people): this device on or off, how many devices receive
 *   notifications, enable / disable / send a test, with the SPEC 8 toasts.
 */
import { useCallback, useEffect, useState, useSyncExternalStore } from "react";
import { useToast } from "../lib/useToast";
import { applyUpdate, checkForUpdate, getPwaState, promptInstall, subscribePwa } from "../pwa/client";
import {
  browserSubscription,
  currentPermission,
  disablePush,
  enablePush,
  fetchStatus,
  isPushSupported,
  pushErrorMessage,
  sendTestNotification,
  type NotificationStatus,
} from "../pwa/push";
import { installLabel, PUSH_TEXT, type SwStatus } from "../pwa/rules";
import type { PwaSettingsProps } from "../generated/PwaSettingsProps";

export const STATUS_TEXT: Record<SwStatus, { label: string; detail: string }> = {
  none: { label: "Not running", detail: "The offline helper is not registered in this browser yet." },
  installing: { label: "Installing", detail: "Saving the app for offline use…" },
  waiting: { label: "Update ready", detail: "A new version has been downloaded. Reload to start using it." },
  active: { label: "Active", detail: "The app shell is saved on this device and opens even without a connection." },
  error: { label: "Error", detail: "The offline helper could not be registered." },
};

const STATUS_LABELS = Object.values(STATUS_TEXT).map((t) => t.label);
const STATUS_DETAILS = Object.values(STATUS_TEXT).map((t) => t.detail);

/**
 * `current` in the space of the longest of `texts`: the status moves from none to installing
 * to active while the page is open, and its words must not push the rest of the page around
 * (layout shift). templates/pages/pwa_settings.html renders the same stack with none shown.
 */
function Stack({ texts, current }: { texts: readonly string[]; current: string }) {
  return (
    <span className="pwa-stack">
      <span>{current}</span>
      {texts
        .filter((t) => t !== current)
        .map((t) => (
          <span key={t} aria-hidden="true">
            {t}
          </span>
        ))}
    </span>
  );
}

function usePwaState() {
  return useSyncExternalStore(subscribePwa, getPwaState, getPwaState);
}

function AppCard({ siteName }: { siteName: string }) {
  const pwa = usePwaState();
  const { toast } = useToast();
  const [checking, setChecking] = useState(false);
  const text = STATUS_TEXT[pwa.status];
  const wide = typeof window !== "undefined" ? window.innerWidth : 1280;

  const install = async () => {
    const outcome = await promptInstall();
    if (outcome === "accepted") toast({ title: "App installed", description: `${siteName} is on your device now.` });
  };
  const check = async () => {
    setChecking(true);
    await checkForUpdate();
    setChecking(false);
  };

  return (
    <section className="card pwa-settings-card" aria-labelledby="pwa-app-title">
      <h2 id="pwa-app-title" className="h4">
        App
      </h2>
      <dl className="pwa-facts">
        <div>
          <dt>Offline helper</dt>
          <dd>
            <span className={`pwa-status pwa-status-${pwa.status}`} data-sw-status={pwa.status}>
              <Stack texts={STATUS_LABELS} current={text.label} />
            </span>
            <span className="pwa-muted">
              <Stack texts={STATUS_DETAILS} current={pwa.status === "error" && pwa.error ? `${text.detail} ${pwa.error}` : text.detail} />
            </span>
          </dd>
        </div>
        <div>
          <dt>Installed</dt>
          <dd data-installed={pwa.installed}>{pwa.installed ? "Yes, running as an app" : "No"}</dd>
        </div>
      </dl>
      <div className="pwa-actions">
        {pwa.status === "waiting" && (
          <button type="button" className="btn btn-primary" onClick={applyUpdate}>
            Reload to update
          </button>
        )}
        {!pwa.installed && pwa.installAvailable && (
          <button type="button" className="btn btn-primary" onClick={() => void install()}>
            {installLabel(wide)}
          </button>
        )}
        <button type="button" className="btn btn-ghost" onClick={() => void check()} disabled={checking || pwa.status === "none"}>
          {checking ? "Checking…" : "Check for updates"}
        </button>
      </div>
      {!pwa.installed && !pwa.installAvailable && (
        <p className="pwa-muted pwa-hint">
          To install {siteName}: in Chrome or Edge, use the install icon in the address bar or the menu&apos;s “Install app”. On
          iPhone or iPad, tap Share, then “Add to Home Screen”.
        </p>
      )}
    </section>
  );
}

type Busy = null | "enable" | "disable" | "test";

function NotificationsCard() {
  const { toast } = useToast();
  const [status, setStatus] = useState<NotificationStatus | null>(null);
  const [endpoint, setEndpoint] = useState<string | null>(null);
  const [busy, setBusy] = useState<Busy>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const supported = isPushSupported();
  const permission = currentPermission();

  const load = useCallback(async () => {
    try {
      const sub = await browserSubscription();
      setEndpoint(sub?.endpoint ?? null);
      setStatus(await fetchStatus(sub?.endpoint));
      setLoadError(null);
    } catch (error) {
      setLoadError(pushErrorMessage(error));
    }
  }, []);

  useEffect(() => {
    void load();
  }, [load]);

  const subscribedHere = Boolean(endpoint && status?.isSubscribed);

  /** Runs one action with its busy label, then the SPEC 8 success toast or failure toast. */
  const run = async (kind: Exclude<Busy, null>, action: () => Promise<unknown>, ok: [string, string], failTitle: string) => {
    setBusy(kind);
    try {
      await action();
      await load();
      toast({ title: ok[0], description: ok[1] });
    } catch (error) {
      toast({ title: failTitle, description: pushErrorMessage(error), variant: "destructive" });
    } finally {
      setBusy(null);
    }
  };
  const enable = () =>
    run("enable", enablePush, [PUSH_TEXT.enabled, "You'll receive updates about new features."], PUSH_TEXT.setupFailed);
  const disable = () =>
    run(
      "disable",
      disablePush,
      [PUSH_TEXT.disabled, "This device will no longer receive push notifications."],
      PUSH_TEXT.unsubscribeFailed,
    );
  const test = () =>
    run(
      "test",
      () => sendTestNotification("test"),
      [PUSH_TEXT.testSent, "It should appear on your devices in a moment."],
      PUSH_TEXT.testFailed,
    );

  if (!supported) {
    return (
      <section className="card pwa-settings-card" aria-labelledby="pwa-push-title">
        <h2 id="pwa-push-title" className="h4">
          {PUSH_TEXT.notSupported}
        </h2>
        <p className="pwa-muted">{PUSH_TEXT.unsupported}. Try a current version of Chrome, Edge, Firefox or Safari over https.</p>
      </section>
    );
  }

  const count = status?.subscriptionCount ?? 0;
  return (
    <section className="card pwa-settings-card" aria-labelledby="pwa-push-title" aria-busy={busy !== null}>
      <h2 id="pwa-push-title" className="h4">
        Push notifications
      </h2>
      <dl className="pwa-facts">
        <div>
          <dt>This device</dt>
          <dd data-push-state={subscribedHere ? "on" : "off"}>
            <span className={`pwa-status ${subscribedHere ? "pwa-status-active" : "pwa-status-none"}`}>
              {subscribedHere ? "On" : "Off"}
            </span>
          </dd>
        </div>
        <div>
          <dt>Devices receiving notifications</dt>
          <dd data-subscription-count={count}>{status ? count : "…"}</dd>
        </div>
        <div>
          <dt>Browser permission</dt>
          <dd>{permission === "granted" ? "Allowed" : permission === "denied" ? "Blocked" : "Not asked yet"}</dd>
        </div>
      </dl>
      {permission === "denied" && (
        <p className="pwa-muted pwa-hint" role="note">
          {PUSH_TEXT.denied}. Allow notifications for this site in your browser&apos;s site settings, then reload.
        </p>
      )}
      {loadError && (
        <p className="pwa-error" role="alert">
          {loadError}
        </p>
      )}
      <div className="pwa-actions">
        {subscribedHere ? (
          <button type="button" className="btn btn-ghost" onClick={() => void disable()} disabled={busy !== null}>
            {busy === "disable" ? "Turning off…" : "Disable notifications"}
          </button>
        ) : (
          <button type="button" className="btn btn-primary" onClick={() => void enable()} disabled={busy !== null}>
            {busy === "enable" ? "Turning on…" : "Enable notifications"}
          </button>
        )}
        <button type="button" className="btn btn-ghost" onClick={() => void test()} disabled={busy !== null || count === 0}>
          {busy === "test" ? "Sending…" : "Send test notification"}
        </button>
      </div>
    </section>
  );
}

export default function PwaSettings({ signedIn = false, siteName = "Reelfind" }: Partial<PwaSettingsProps>) {
  return (
    <div className="pwa-settings">
      <AppCard siteName={siteName} />
      {signedIn ? (
        <NotificationsCard />
      ) : (
        <section className="card pwa-settings-card" aria-labelledby="pwa-push-title">
          <h2 id="pwa-push-title" className="h4">
            Push notifications
          </h2>
          <p className="pwa-muted">Sign in to get notifications about new features and special offers on your devices.</p>
          <p>
            <a className="btn btn-primary" href="/auth">
              Sign in
            </a>
          </p>
        </section>
      )}
    </div>
  );
}
