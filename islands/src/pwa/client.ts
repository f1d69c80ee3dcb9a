/**
 * The page side of the installable app, loaded by the runtime on every page at idle time
 * (no React): registers /sw.js with root scope and tracks its status (SPEC 4: none,
 * installing, waiting, active, error), checks for a new version every 5 minutes and
 * offers "Reload" when one is waiting; shows the install card 3 s after the browser's
 * `beforeinstallprompt` (SPEC 2); shows signed-in people the notification prompt (SPEC 4)
 * after an identification (the `reelfind:identified` window event).
 *
 * The PwaSettings island reads the same state through `getPwaState`/`subscribePwa`.
 */
import { logError, logWarning } from "../lib/log";
import { getItem, removeItem, setItem, StorageKeys } from "../lib/storage";
import { toast } from "../lib/toast";
import {
  INSTALL_PROMPT_DELAY_MS,
  installLabel,
  movieImageUrls,
  PUSH_TEXT,
  shouldShowNotificationPrompt,
  SW_UPDATE_INTERVAL_MS,
  swStatusOf,
  type SwStatus,
} from "./rules";

/** The browser's install event (Chromium); not in the DOM typings. */
export interface BeforeInstallPromptEvent extends Event {
  prompt(): Promise<void>;
  userChoice: Promise<{ outcome: "accepted" | "dismissed" }>;
}

export interface PwaState {
  status: SwStatus;
  /** The browser offered installation (a deferred `beforeinstallprompt`). */
  installAvailable: boolean;
  /** Running as an installed app, or installed during this visit. */
  installed: boolean;
  error: string | null;
}

const notificationsSupported = () => "Notification" in window;
const currentPermission = () => (notificationsSupported() ? Notification.permission : null);

/** Session key: the install card was dismissed in this tab session. */
const INSTALL_DISMISSED = "installPromptDismissed";

let state: PwaState = { status: "none", installAvailable: false, installed: false, error: null };
const listeners = new Set<(s: PwaState) => void>();
let deferredPrompt: BeforeInstallPromptEvent | null = null;
let registration: ServiceWorkerRegistration | null = null;
/** The person clicked Reload: the next controller change reloads the page. */
let updateRequested = false;
let reloading = false;
let started = false;

export function getPwaState(): PwaState {
  return state;
}

export function subscribePwa(listener: (s: PwaState) => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function update(patch: Partial<PwaState>) {
  state = { ...state, ...patch };
  for (const l of listeners) l(state);
  renderUpdateBar();
}

function isStandalone(): boolean {
  const nav = navigator as Navigator & { standalone?: boolean };
  return window.matchMedia?.("(display-mode: standalone)").matches === true || nav.standalone === true;
}

function refreshStatus() {
  if (!registration) return;
  update({ status: swStatusOf(registration, Boolean(navigator.serviceWorker.controller)), error: null });
}

function watchWorker(worker: ServiceWorker | null | undefined) {
  worker?.addEventListener("statechange", refreshStatus);
}

/** Registers the service worker and keeps `state.status` current. */
export async function registerServiceWorker(): Promise<ServiceWorkerRegistration | null> {
  if (!("serviceWorker" in navigator)) {
    update({ status: "none" });
    return null;
  }
  try {
    const reg = await navigator.serviceWorker.register("/sw.js", { scope: "/" });
    registration = reg;
    watchWorker(reg.installing);
    watchWorker(reg.waiting);
    watchWorker(reg.active);
    reg.addEventListener("updatefound", () => {
      watchWorker(reg.installing);
      refreshStatus();
    });
    refreshStatus();
    setInterval(() => void checkForUpdate(), SW_UPDATE_INTERVAL_MS);
    return reg;
  } catch (error) {
    update({ status: "error", error: error instanceof Error ? error.message : String(error) });
    logError("Service worker registration failed", "pwa", error);
    return null;
  }
}

/** Asks the browser to fetch /sw.js again (it is served `no-cache`). */
export async function checkForUpdate(): Promise<void> {
  try {
    await registration?.update();
  } catch (error) {
    logWarning(`Service worker update check failed: ${String(error)}`, "pwa");
  }
}

/** Activates the waiting worker; the page reloads when it takes control. */
export function applyUpdate(): void {
  const waiting = registration?.waiting;
  if (!waiting) {
    location.reload();
    return;
  }
  updateRequested = true;
  waiting.postMessage({ type: "SKIP_WAITING" });
}

/** Shows the browser's install dialog; what the person chose, or "unavailable". */
export async function promptInstall(): Promise<"accepted" | "dismissed" | "unavailable"> {
  const prompt = deferredPrompt;
  if (!prompt) return "unavailable";
  deferredPrompt = null;
  await prompt.prompt();
  const { outcome } = await prompt.userChoice;
  update({ installAvailable: false, installed: outcome === "accepted" || state.installed });
  hideCard("install");
  return outcome;
}

// ---------- the cards (install, notifications, update) ----------

function cardHost(): HTMLElement {
  let host = document.querySelector<HTMLElement>("[data-pwa-cards]");
  if (!host) {
    host = document.createElement("div");
    host.className = "pwa-cards";
    host.setAttribute("data-pwa-cards", "");
    document.body.append(host);
  }
  return host;
}

function hideCard(kind: string) {
  document.querySelector(`[data-pwa-card="${kind}"]`)?.remove();
}

interface CardOptions {
  kind: string;
  title: string;
  text: string;
  primary: { label: string; onClick: () => void | Promise<void> };
  secondary: { label: string; onClick: () => void };
  onClose: () => void;
}

function showCard(o: CardOptions): HTMLElement {
  hideCard(o.kind);
  const card = document.createElement("section");
  card.className = "pwa-card";
  card.dataset.pwaCard = o.kind;
  const titleId = `pwa-card-${o.kind}-title`;
  card.setAttribute("aria-labelledby", titleId);
  const icon = document.createElement("img");
  icon.className = "pwa-card-icon";
  icon.src = "/assets/icons/icon-192.png";
  icon.alt = "";
  icon.width = 40;
  icon.height = 40;
  const body = document.createElement("div");
  body.className = "pwa-card-body";
  const h = document.createElement("h2");
  h.id = titleId;
  h.className = "pwa-card-title";
  h.textContent = o.title;
  const p = document.createElement("p");
  p.className = "pwa-card-text";
  p.textContent = o.text;
  const actions = document.createElement("div");
  actions.className = "pwa-card-actions";
  const primary = document.createElement("button");
  primary.type = "button";
  primary.className = "btn btn-primary btn-sm";
  primary.textContent = o.primary.label;
  primary.addEventListener("click", () => void o.primary.onClick());
  const secondary = document.createElement("button");
  secondary.type = "button";
  secondary.className = "btn btn-ghost btn-sm";
  secondary.textContent = o.secondary.label;
  secondary.addEventListener("click", o.secondary.onClick);
  actions.append(primary, secondary);
  const close = document.createElement("button");
  close.type = "button";
  close.className = "pwa-card-close";
  close.setAttribute("aria-label", "Close");
  close.textContent = "×";
  close.addEventListener("click", o.onClose);
  body.append(h, p, actions);
  card.append(icon, body, close);
  card.addEventListener("keydown", (e) => {
    if (e.key === "Escape") o.onClose();
  });
  cardHost().append(card);
  return card;
}

function renderUpdateBar() {
  if (state.status !== "waiting") {
    hideCard("update");
    return;
  }
  if (document.querySelector('[data-pwa-card="update"]')) return;
  showCard({
    kind: "update",
    title: "Update ready",
    text: "A new version of the app is ready. Reload to use it.",
    primary: { label: "Reload", onClick: applyUpdate },
    secondary: { label: "Later", onClick: () => hideCard("update") },
    onClose: () => hideCard("update"),
  });
}

function showInstallCard() {
  if (!deferredPrompt || state.installed || getItem(INSTALL_DISMISSED, "session")) return;
  const dismiss = () => {
    setItem(INSTALL_DISMISSED, "true", "session");
    hideCard("install");
  };
  const siteName = document.querySelector<HTMLMetaElement>('meta[property="og:site_name"]')?.content || "Reelfind";
  showCard({
    kind: "install",
    title: `Install ${siteName}`,
    text: "Open it from your home screen or desktop like any app, with a window of its own.",
    primary: { label: installLabel(window.innerWidth), onClick: () => void promptInstall() },
    secondary: { label: "Not now", onClick: dismiss },
    onClose: dismiss,
  });
}

/** SPEC 4: the notification prompt, when its rules allow. Returns whether it was shown. */
export function maybeShowNotificationPrompt(signedIn: boolean): boolean {
  const show = shouldShowNotificationPrompt({
    supported: notificationsSupported(),
    secure: window.isSecureContext,
    permission: currentPermission(),
    flags: {
      notificationPromptShown: getItem(StorageKeys.notificationPromptShown),
      notificationPromptDismissed: getItem(StorageKeys.notificationPromptDismissed),
      hasIdentificationHistory: getItem(StorageKeys.hasIdentificationHistory),
    },
  });
  if (!show) return false;
  setItem(StorageKeys.notificationPromptShown, "true");
  setItem(StorageKeys.hasIdentificationHistory, "true");
  const dismiss = () => {
    setItem(StorageKeys.notificationPromptDismissed, "true");
    hideCard("notifications");
  };
  showCard({
    kind: "notifications",
    title: "Get notified",
    text: "Turn on notifications to hear about new features and special offers.",
    primary: {
      label: "Enable",
      onClick: async () => {
        hideCard("notifications");
        // Loaded on demand: plain pages stay small.
        const { enablePush, isPushSupported, pushErrorMessage, requestPermission } = await import("./push");
        try {
          const permission = await requestPermission();
          if (permission !== "granted") return;
          toast({ title: "Notifications Enabled", description: "You'll receive updates about new features." });
          if (signedIn && isPushSupported()) await enablePush();
        } catch (error) {
          toast({ title: PUSH_TEXT.setupFailed, description: pushErrorMessage(error), variant: "destructive" });
        }
      },
    },
    secondary: { label: "Not Now", onClick: dismiss },
    onClose: dismiss,
  });
  return true;
}

/** Starts everything above; called once by the runtime. */
export function startPwa(opts: { signedIn: boolean }): void {
  if (started) return;
  started = true;
  update({ installed: isStandalone() });
  window.addEventListener("beforeinstallprompt", (e) => {
    e.preventDefault();
    deferredPrompt = e as BeforeInstallPromptEvent;
    update({ installAvailable: true });
    setTimeout(showInstallCard, INSTALL_PROMPT_DELAY_MS);
  });
  window.addEventListener("appinstalled", () => {
    deferredPrompt = null;
    update({ installAvailable: false, installed: true });
    hideCard("install");
  });
  window.addEventListener("reelfind:identified", (e) => {
    const urls = movieImageUrls((e as CustomEvent).detail);
    if (urls.length) navigator.serviceWorker?.controller?.postMessage({ type: "CACHE_MOVIE_DATA", urls });
  });
  // Push is for signed-in people (SPEC 1), so only they are asked.
  if (opts.signedIn) window.addEventListener("reelfind:identified", () => maybeShowNotificationPrompt(true));
  if ("serviceWorker" in navigator) {
    navigator.serviceWorker.addEventListener("controllerchange", () => {
      // Only an update the person asked for reloads the page (the first install claims silently).
      if (updateRequested && !reloading) {
        reloading = true;
        location.reload();
      }
      refreshStatus();
    });
    navigator.serviceWorker.addEventListener("message", (e: MessageEvent) => {
      const type = (e.data as { type?: string } | null)?.type;
      if (type === "SYNC_SUCCESS" || type === "CACHE_UPDATED") {
        window.dispatchEvent(new CustomEvent(`reelfind:${type.toLowerCase()}`, { detail: e.data }));
      }
    });
    window.addEventListener("online", () => {
      const reg = registration as (ServiceWorkerRegistration & { sync?: { register(tag: string): Promise<void> } }) | null;
      reg?.sync?.register("refresh-shell").catch(() => undefined);
    });
  }
  // Tells tests (and styles) that the listeners above are in place.
  document.documentElement.dataset.pwa = "ready";
  // A permission revoked in the browser's settings makes the stored grant stale.
  if (currentPermission() !== "granted") removeItem(StorageKeys.notificationPermission);
  // Register once the page has loaded, so installing the worker (it precaches the shell)
  // never competes with the page's own first requests.
  const register = () => void registerServiceWorker();
  if (document.readyState === "complete") register();
  else window.addEventListener("load", register, { once: true });
}
