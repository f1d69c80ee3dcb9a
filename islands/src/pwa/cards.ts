/**
 * The cards of the installable app (no React), loaded by client.ts only when one is due:
 * the install card (SPEC 2), the notification prompt (SPEC 4) and "Update ready".
 */
import { getItem, setItem, StorageKeys } from "../lib/storage";
import { siteName } from "../lib/site";
import { toast } from "../lib/toast";
import { applyUpdate, installOffered, promptInstall } from "./client";
import { installLabel, PUSH_TEXT, shouldShowNotificationPrompt } from "./rules";

/** Session key: the install card was dismissed in this tab session. */
const INSTALL_DISMISSED = "installPromptDismissed";

const notificationsSupported = () => "Notification" in window;
const currentPermission = () => (notificationsSupported() ? Notification.permission : null);

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
  close.dataset.tooltip = "";
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

export function renderUpdateBar(waiting: boolean) {
  if (!waiting) {
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

export function showInstallCard() {
  if (!installOffered() || getItem(INSTALL_DISMISSED, "session")) return;
  const dismiss = () => {
    setItem(INSTALL_DISMISSED, "true", "session");
    hideCard("install");
  };
  showCard({
    kind: "install",
    title: `Install ${siteName()}`,
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

