/**
 * Push notifications in the browser (SPEC sections 6, 7 and 8): permission, the browser's
 * PushManager subscription and the server's copy of it. Errors carry the SPEC's texts.
 */
import { ApiError, getJson, postJson } from "../lib/api";
import { setItem, StorageKeys } from "../lib/storage";
import { base64UrlToBytes, PUSH_TEXT } from "./rules";

export interface NotificationStatus {
  isSubscribed: boolean;
  subscriptionCount: number;
}

/** Push needs a secure page, a service worker, the Push API and notifications. */
export function isPushSupported(): boolean {
  return (
    typeof window !== "undefined" &&
    window.isSecureContext &&
    "serviceWorker" in navigator &&
    "PushManager" in window &&
    "Notification" in window
  );
}

export function notificationsSupported(): boolean {
  return typeof window !== "undefined" && "Notification" in window;
}

export function currentPermission(): NotificationPermission | null {
  return notificationsSupported() ? Notification.permission : null;
}

/** Asks for permission (once the browser allows it) and remembers a grant (SPEC 3 `notificationPermission`). */
export async function requestPermission(): Promise<NotificationPermission> {
  if (!notificationsSupported()) throw new Error(PUSH_TEXT.unsupported);
  const result = await Notification.requestPermission();
  if (result === "granted") setItem(StorageKeys.notificationPermission, "granted");
  return result;
}

async function registration(): Promise<ServiceWorkerRegistration> {
  const existing = await navigator.serviceWorker.getRegistration("/");
  if (!existing) await navigator.serviceWorker.register("/sw.js", { scope: "/" });
  return navigator.serviceWorker.ready;
}

/** This browser's current subscription, if any. */
export async function browserSubscription(): Promise<PushSubscription | null> {
  if (!isPushSupported()) return null;
  const reg = await navigator.serviceWorker.getRegistration("/");
  return reg ? reg.pushManager.getSubscription() : null;
}

/** The server's view: is this browser's endpoint stored, and how many devices are. */
export async function fetchStatus(endpoint?: string | null): Promise<NotificationStatus> {
  const q = endpoint ? `?endpoint=${encodeURIComponent(endpoint)}` : "";
  return getJson<NotificationStatus>(`/api/notifications/status${q}`);
}

function deviceInfo() {
  const nav = navigator as Navigator & { userAgentData?: { platform?: string; mobile?: boolean } };
  return {
    userAgent: navigator.userAgent.slice(0, 300),
    platform: nav.userAgentData?.platform ?? navigator.platform ?? "",
    mobile: nav.userAgentData?.mobile ?? window.matchMedia?.("(max-width: 768px)").matches ?? false,
    language: navigator.language,
  };
}

/**
 * Permission, then the browser subscription with our VAPID key, then the server's copy.
 * Throws an Error with a SPEC 8 message.
 */
export async function enablePush(): Promise<NotificationStatus> {
  if (!isPushSupported()) throw new Error(PUSH_TEXT.unsupported);
  const permission = await requestPermission();
  if (permission !== "granted") throw new Error(PUSH_TEXT.denied);
  let publicKey: string;
  try {
    publicKey = (await getJson<{ publicKey: string }>("/api/notifications/vapid-public-key")).publicKey;
    if (!publicKey) throw new Error("empty key");
  } catch {
    throw new Error(PUSH_TEXT.noVapidKey);
  }
  const reg = await registration();
  const key = base64UrlToBytes(publicKey);
  let sub = await reg.pushManager.getSubscription();
  // A subscription made with another server key cannot receive our messages: replace it.
  if (sub?.options.applicationServerKey) {
    const current = new Uint8Array(sub.options.applicationServerKey);
    if (current.length !== key.length || current.some((b, i) => b !== key[i])) {
      await sub.unsubscribe();
      sub = null;
    }
  }
  sub ??= await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key });
  await postJson("/api/notifications/subscribe", { subscription: sub.toJSON(), deviceInfo: deviceInfo() });
  return fetchStatus(sub.endpoint);
}

/** Ends this browser's subscription, here and on the server. */
export async function disablePush(): Promise<NotificationStatus> {
  const sub = await browserSubscription();
  if (!sub) throw new Error(PUSH_TEXT.noSubscription);
  const endpoint = sub.endpoint;
  await sub.unsubscribe();
  await postJson("/api/notifications/unsubscribe", { endpoint });
  return fetchStatus();
}

/** Asks the server to push a notification of `type` to this person's devices. */
export async function sendTestNotification(type: "test" | "welcome" = "test"): Promise<void> {
  await postJson("/api/notifications/test", { type });
}

/** SPEC 7: the onboarding's outcome. */
export async function saveNotificationPreferences(pushNotifications: boolean): Promise<void> {
  await postJson("/api/user/notification-preferences", {
    pushNotifications,
    emailNotifications: false,
    onboardingComplete: true,
  });
}

/** The sentence to show for a failure: ours, the server's `{error}`, or the raw text. */
export function pushErrorMessage(error: unknown): string {
  if (error instanceof ApiError) return error.json<{ error?: string }>()?.error || error.message;
  if (error instanceof Error) {
    if (error.name === "NotAllowedError") return PUSH_TEXT.denied;
    return error.message;
  }
  return String(error);
}
