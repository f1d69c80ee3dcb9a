/**
 * The installable-app and notification rules of SPEC sections 2, 4, 6, 7 and 9, as pure
 * functions: the service worker (src/sw/sw.ts), the page-side module (client.ts) and the
 * islands share them, and test/pwa-rules.test.ts checks them.
 */

/** Install card appears this long after the browser's `beforeinstallprompt` (SPEC 9). */
export const INSTALL_PROMPT_DELAY_MS = 3000;
/** Service worker update check interval (SPEC 9: 300000 ms). */
export const SW_UPDATE_INTERVAL_MS = 300_000;
/** The welcome test notification follows a successful onboarding after 2 s (SPEC 9). */
export const WELCOME_TEST_DELAY_MS = 2000;
/** Width at or under which the screen counts as mobile (SPEC 9). */
export const MOBILE_MAX_WIDTH = 768;

/** SPEC 8: the notification messages. */
export const PUSH_TEXT = {
  unsupported: "Push notifications are not supported in this browser",
  denied: "Notification permission denied",
  noVapidKey: "Failed to get VAPID public key",
  noSubscription: "No active subscription found",
  setupFailed: "Notification Setup Failed",
  unsubscribeFailed: "Unsubscribe Failed",
  testFailed: "Test Failed",
  notSupported: "Notifications Not Supported",
  enabled: "Notifications Enabled!",
  disabled: "Notifications Disabled",
  testSent: "Test Notification Sent!",
} as const;

/** SPEC 2: the install card's call to action. */
export function installLabel(viewportWidth: number): string {
  return viewportWidth <= MOBILE_MAX_WIDTH ? "Add to Home Screen" : "Install App";
}

/** Service worker status (SPEC 4). */
export type SwStatus = "none" | "installing" | "waiting" | "active" | "error";

/** What a registration's state means for the page. */
export function swStatusOf(reg: {
  installing?: unknown;
  waiting?: unknown;
  active?: unknown;
} | null, hasController: boolean): SwStatus {
  if (!reg) return "none";
  // A waiting worker while another one controls the page is an update ready to apply.
  if (reg.waiting && hasController) return "waiting";
  if (reg.installing) return "installing";
  if (reg.active || reg.waiting) return "active";
  return "none";
}

/** The browser-stored flags the notification prompt reads (SPEC 3 and 4). */
export interface PromptFlags {
  notificationPromptShown: string | null;
  notificationPromptDismissed: string | null;
  hasIdentificationHistory: string | null;
}

/**
 * SPEC 4: the notification prompt is shown once, only when the browser supports
 * notifications, the page is a secure context (https; browsers also treat localhost as
 * secure) and none of the three flags exist. A permission the person already granted or
 * refused is not asked again.
 */
export function shouldShowNotificationPrompt(env: {
  supported: boolean;
  secure: boolean;
  permission: NotificationPermission | null;
  flags: PromptFlags;
}): boolean {
  if (!env.supported || !env.secure) return false;
  if (env.permission === "granted" || env.permission === "denied") return false;
  const f = env.flags;
  return f.notificationPromptShown === null && f.notificationPromptDismissed === null && f.hasIdentificationHistory === null;
}

/** SPEC 4 "Onboarding": welcome → benefits → permission → success | declined. */
export type OnboardingStep = "welcome" | "benefits" | "permission" | "success" | "declined";
export type OnboardingEvent = "next" | "enable" | "granted" | "failed" | "skip" | "unsupported";

export function onboardingNext(step: OnboardingStep, event: OnboardingEvent): OnboardingStep {
  if (event === "skip" || event === "unsupported") return step === "success" ? step : "declined";
  switch (step) {
    case "welcome":
      return event === "next" ? "benefits" : step;
    case "benefits":
      return event === "enable" ? "permission" : step;
    case "permission":
      if (event === "granted") return "success";
      if (event === "failed") return "declined";
      return step;
    default:
      return step;
  }
}

/** How the service worker answers a request. */
export type Strategy = "bypass" | "page" | "immutable" | "static";

/**
 * Which requests the service worker handles. Only same-origin GETs: pages are fetched
 * network-first with the offline page as fallback (never stored: they carry the
 * signed-in person's name); hashed bundles under /assets/dist are cache-first; icons,
 * stylesheets and the manifest are served from cache while being refreshed. Media (the
 * demo clip), range requests and everything
 * under /api (identification, the session, every authenticated answer), /sw.js itself and
 * any other origin pass straight to the network and are never cached.
 */
export function strategyFor(
  req: { url: string; method: string; mode: string; headers?: { has(name: string): boolean } },
  origin: string,
): Strategy {
  if (req.method !== "GET") return "bypass";
  // Range requests (video seeking) need the server's partial answers.
  if (req.headers?.has("range")) return "bypass";
  let url: URL;
  try {
    url = new URL(req.url);
  } catch {
    return "bypass";
  }
  if (url.origin !== origin) return "bypass";
  const p = url.pathname;
  if (p.startsWith("/api/") || p === "/api" || p === "/sw.js" || p === "/healthz") return "bypass";
  if (req.mode === "navigate") return "page";
  if (p.startsWith("/assets/dist/")) return "immutable";
  if (p.startsWith("/assets/icons/") || p.startsWith("/assets/css/") || p === "/manifest.webmanifest") return "static";
  return "bypass";
}

/** URLs `CACHE_MOVIE_DATA` / `PREFETCH_ADMIN` may store: same-origin assets, or https images elsewhere; never the API. */
export function cacheableDataUrl(raw: string, origin: string): boolean {
  let url: URL;
  try {
    url = new URL(raw, origin);
  } catch {
    return false;
  }
  if (url.origin === origin) return url.pathname.startsWith("/assets/");
  return url.protocol === "https:";
}

/** Pictures of a result worth keeping offline: the poster, then cast photos (8 at most). */
export function movieImageUrls(result: unknown): string[] {
  if (!result || typeof result !== "object") return [];
  const r = result as { posterUrl?: unknown; poster?: unknown; cast?: unknown };
  const urls: unknown[] = [r.posterUrl ?? r.poster];
  if (Array.isArray(r.cast)) for (const c of r.cast) urls.push((c as { profileUrl?: unknown } | null)?.profileUrl);
  return [...new Set(urls.filter((u): u is string => typeof u === "string" && u.length > 0))].slice(0, 8);
}

/** Base64url (as in `publicKey`) to the bytes `applicationServerKey` wants. */
export function base64UrlToBytes(value: string): Uint8Array<ArrayBuffer> {
  const b64 = value.replace(/-/g, "+").replace(/_/g, "/");
  const padded = b64 + "=".repeat((4 - (b64.length % 4)) % 4);
  const bin = atob(padded);
  const out = new Uint8Array(new ArrayBuffer(bin.length));
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** What a push message shows; the server sends `{title, body, url, tag, icon}`. */
export interface PushPayload {
  title: string;
  body: string;
  url: string;
  tag?: string;
  icon?: string;
}

/** Reads a push message's JSON, tolerating plain text and missing fields. */
export function parsePushPayload(text: string | null, siteName = "Reelfind"): PushPayload {
  const fallback: PushPayload = { title: siteName, body: text ?? "", url: "/" };
  if (!text) return fallback;
  try {
    const v = JSON.parse(text) as Partial<PushPayload>;
    if (!v || typeof v !== "object") return fallback;
    const url = typeof v.url === "string" && v.url.startsWith("/") && !v.url.startsWith("//") ? v.url : "/";
    return {
      title: typeof v.title === "string" && v.title ? v.title : siteName,
      body: typeof v.body === "string" ? v.body : "",
      url,
      tag: typeof v.tag === "string" ? v.tag : undefined,
      icon: typeof v.icon === "string" ? v.icon : undefined,
    };
  } catch {
    return fallback;
  }
}
