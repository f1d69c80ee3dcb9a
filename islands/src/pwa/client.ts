/**
 * The page side of the installable app, loaded by the runtime on every page at idle time
 * (no React): registers /sw.js with root scope and tracks its status (SPEC 4: none,
 * installing, waiting, active, error), checks for a new version every 5 minutes and
 * offers "Reload" when one is waiting; shows the install card 3 s after the browser's
 * `beforeinstallprompt` (SPEC 2); shows signed-in people the notification prompt (SPEC 4)
 * after an identification (the `reelfind:identified` window event).
 *
 * The cards themselves live in cards.ts, loaded when one is due. The PwaSettings island
 * reads the same state through `getPwaState`/`subscribePwa`.
 */
import { logError, logWarning } from "../lib/log";
import { removeItem, StorageKeys } from "../lib/storage";
import { INSTALL_PROMPT_DELAY_MS, movieImageUrls, SW_UPDATE_INTERVAL_MS, swStatusOf, type SwStatus } from "./rules";

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

const currentPermission = () => ("Notification" in window ? Notification.permission : null);

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

/** The cards' code loads only when a card is due (plain pages stay small). */
const cards = () => import("./cards");

function update(patch: Partial<PwaState>) {
  state = { ...state, ...patch };
  for (const l of listeners) l(state);
  if (state.status === "waiting" || document.querySelector('[data-pwa-card="update"]')) {
    void cards().then((m) => m.renderUpdateBar(state.status === "waiting"));
  }
}

function removeCard(kind: string) {
  document.querySelector(`[data-pwa-card="${kind}"]`)?.remove();
}

/** Whether the install card may show: the browser offered installation and it is not installed. */
export function installOffered(): boolean {
  return deferredPrompt !== null && !state.installed;
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
  removeCard("install");
  return outcome;
}

/** Starts everything above; called once by the runtime. */
/**
 * PREFETCH_ADMIN (SPEC section 7): once an administrator has signed in, the service worker
 * warms the admin pages' code. Sent once per sign-in: the first page this tab shows the
 * admin (sessionStorage remembers which admin it was sent for; a sign-out and a new
 * sign-in start a new tab session only for another account, which is sent again).
 */
export const ADMIN_PREFETCH_KEY = "reelfind.adminPrefetched";

export async function prefetchAdmin(adminId: string): Promise<boolean> {
  if (!("serviceWorker" in navigator)) return false;
  try {
    if (sessionStorage.getItem(ADMIN_PREFETCH_KEY) === adminId) return false;
  } catch {
    /* storage blocked: send it anyway, the worker skips what it already has */
  }
  const reg = await navigator.serviceWorker.ready;
  if (!reg.active) return false;
  reg.active.postMessage({ type: "PREFETCH_ADMIN" });
  try {
    sessionStorage.setItem(ADMIN_PREFETCH_KEY, adminId);
  } catch {
    /* ignore */
  }
  return true;
}

export function startPwa(opts: { signedIn: boolean; adminId?: string | null }): void {
  if (started) return;
  started = true;
  update({ installed: isStandalone() });
  window.addEventListener("beforeinstallprompt", (e) => {
    e.preventDefault();
    deferredPrompt = e as BeforeInstallPromptEvent;
    update({ installAvailable: true });
    setTimeout(() => void cards().then((m) => m.showInstallCard()), INSTALL_PROMPT_DELAY_MS);
  });
  window.addEventListener("appinstalled", () => {
    deferredPrompt = null;
    update({ installAvailable: false, installed: true });
    removeCard("install");
  });
  window.addEventListener("reelfind:identified", (e) => {
    const urls = movieImageUrls((e as CustomEvent).detail);
    if (urls.length) navigator.serviceWorker?.controller?.postMessage({ type: "CACHE_MOVIE_DATA", urls });
  });
  // Push is for signed-in people (SPEC 1), so only they are asked.
  if (opts.signedIn) {
    window.addEventListener("reelfind:identified", () => void cards().then((m) => m.maybeShowNotificationPrompt(true)));
  }
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
  const register = () =>
    void registerServiceWorker().then(() => {
      if (opts.adminId) void prefetchAdmin(opts.adminId).catch((e) => logWarning(`PREFETCH_ADMIN not sent: ${String(e)}`, "pwa"));
    });
  if (document.readyState === "complete") register();
  else window.addEventListener("load", register, { once: true });
}
