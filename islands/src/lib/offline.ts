/**
 * The offline banner of SPEC "Layout": shown while the browser is offline; after the
 * connection returns it says so for 3 s. One banner per page, rendered by the runtime
 * without React so it works on every page.
 */
export const OFFLINE_TEXT = "You're currently offline. Some features may not be available.";
export const RESTORED_TEXT = "Connection restored! You're back online.";
export const RESTORED_MS = 3000;

export function mountOfflineBanner(): () => void {
  const banner = document.createElement("div");
  banner.className = "offline-banner";
  banner.setAttribute("role", "status");
  banner.setAttribute("aria-live", "polite");
  banner.hidden = true;
  document.body.append(banner);
  let timer: ReturnType<typeof setTimeout> | undefined;

  const show = (text: string, state: "offline" | "online") => {
    banner.textContent = text;
    banner.dataset.state = state;
    banner.hidden = false;
  };
  const onOffline = () => {
    clearTimeout(timer);
    show(OFFLINE_TEXT, "offline");
  };
  const onOnline = () => {
    clearTimeout(timer);
    if (banner.hidden) return;
    show(RESTORED_TEXT, "online");
    timer = setTimeout(() => {
      banner.hidden = true;
    }, RESTORED_MS);
  };
  window.addEventListener("offline", onOffline);
  window.addEventListener("online", onOnline);
  if (!navigator.onLine) onOffline();
  return () => {
    clearTimeout(timer);
    window.removeEventListener("offline", onOffline);
    window.removeEventListener("online", onOnline);
    banner.remove();
  };
}
