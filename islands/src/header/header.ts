/**
 * Brings the server-rendered header (templates/partials/header.html) to life without React,
 * so pages without React islands stay light:
 *
 * - scrolled style: `is-scrolled` on the header after 10px of scroll;
 * - the user menu (disclosure button + panel) and, at 768px and below, the mobile menu,
 *   whose focus is trapped (focus-trap, fetched on first use) while open; Escape and a click outside close
 *   either, and both close when the page is shown again from the back/forward cache;
 * - the theme toggle (light -> dark -> system);
 * - Logout: POST /api/logout, then a toast, the cached data and the free-usage counter
 *   cleared, and about 100 ms later the home page. A failure is only logged (SPEC 4).
 */
import type { FocusTrap } from "focus-trap";
import { apiRequest } from "../lib/api";
import { logError } from "../lib/log";
import { clearFreeUsageCount } from "../lib/storage";
import { getTheme, nextTheme, resolvedTheme, setTheme, subscribePreferences, type Theme } from "../lib/theme";
import { toast, toastAfterNavigation } from "../lib/toast";

export const SCROLL_THRESHOLD = 10;
export const MOBILE_QUERY = "(max-width: 768px)";
export const LOGOUT_REDIRECT_MS = 100;

export interface HeaderOptions {
  /** Called after a successful logout, before the redirect (the runtime clears the query cache). */
  onLoggedOut?: () => void;
  /** Where to go after logout; tests replace it. */
  navigate?: (url: string) => void;
}

const THEME_LABEL: Record<Theme, string> = { light: "light", dark: "dark", system: "system" };

export function enhanceHeader(header: HTMLElement, options: HeaderOptions = {}): () => void {
  const cleanups: Array<() => void> = [];
  const on = <K extends keyof WindowEventMap>(
    target: Window | Document | HTMLElement,
    type: K | string,
    fn: (e: Event) => void,
    opts?: AddEventListenerOptions,
  ) => {
    target.addEventListener(type, fn, opts);
    cleanups.push(() => target.removeEventListener(type, fn, opts));
  };

  // Scrolled style.
  const onScroll = () => header.classList.toggle("is-scrolled", window.scrollY > SCROLL_THRESHOLD);
  onScroll();
  on(window, "scroll", onScroll, { passive: true });

  // User menu: a disclosure. Escape and outside click close it.
  const userMenu = header.querySelector<HTMLElement>("[data-user-menu]");
  const userButton = header.querySelector<HTMLButtonElement>("[data-user-menu-button]");
  const userPanel = header.querySelector<HTMLElement>("[data-user-menu-panel]");
  const setUserOpen = (open: boolean, focusButton = false) => {
    if (!userMenu || !userButton) return;
    userButton.setAttribute("aria-expanded", String(open));
    userMenu.classList.toggle("is-open", open);
    if (open) userPanel?.querySelector<HTMLElement>("a, button")?.focus();
    else if (focusButton) userButton.focus();
  };
  const userOpen = () => userButton?.getAttribute("aria-expanded") === "true";
  if (userButton) on(userButton, "click", () => setUserOpen(!userOpen()));
  if (userMenu) {
    on(userMenu, "keydown", (e) => {
      if ((e as KeyboardEvent).key === "Escape" && userOpen()) {
        e.stopPropagation();
        setUserOpen(false, true);
      }
    });
    on(userMenu, "focusout", (e) => {
      const next = (e as FocusEvent).relatedTarget as Node | null;
      if (next && !userMenu.contains(next)) setUserOpen(false);
    });
  }

  // Mobile menu: the toggle shows the menu panel and traps focus in it (with the toggle).
  const toggle = header.querySelector<HTMLButtonElement>("[data-nav-toggle]");
  const menu = header.querySelector<HTMLElement>("[data-header-menu]");
  const mobile = matchMedia(MOBILE_QUERY);
  let trap: FocusTrap | null = null;
  let trapModule: Promise<typeof import("focus-trap")> | null = null;
  const loadTrap = () => (trapModule ??= import("focus-trap"));
  const mobileOpen = () => toggle?.getAttribute("aria-expanded") === "true";
  const setMobileOpen = async (open: boolean) => {
    if (!toggle || !menu) return;
    if (open === mobileOpen()) return;
    toggle.setAttribute("aria-expanded", String(open));
    toggle.setAttribute("aria-label", open ? "Close menu" : "Open menu");
    header.classList.toggle("menu-open", open);
    document.documentElement.classList.toggle("has-open-menu", open);
    if (open) {
      const { createFocusTrap } = await loadTrap();
      if (!mobileOpen()) return;
      trap ??= createFocusTrap([toggle, menu], {
        escapeDeactivates: true,
        clickOutsideDeactivates: true,
        returnFocusOnDeactivate: true,
        initialFocus: () => menu.querySelector<HTMLElement>("a, button") ?? toggle,
        onDeactivate: () => void setMobileOpen(false),
      });
      trap.activate();
    } else {
      setUserOpen(false);
      if (trap?.active) trap.deactivate();
    }
  };
  if (toggle && menu) {
    on(toggle, "click", () => void setMobileOpen(!mobileOpen()));
    // Fetch the focus trap ahead of the first tap on small screens.
    if (mobile.matches) setTimeout(() => void loadTrap(), 1500);
    const onBreakpoint = () => {
      if (!mobile.matches) void setMobileOpen(false);
    };
    mobile.addEventListener("change", onBreakpoint);
    cleanups.push(() => mobile.removeEventListener("change", onBreakpoint));
  }

  // Escape and outside clicks close the user menu (the trap handles the mobile menu).
  on(document, "keydown", (e) => {
    if ((e as KeyboardEvent).key === "Escape" && userOpen()) setUserOpen(false, true);
  });
  on(document, "pointerdown", (e) => {
    const target = e.target as Node | null;
    if (userOpen() && userMenu && target && !userMenu.contains(target)) setUserOpen(false);
  });
  // A page restored from the back/forward cache is a new "route": close both menus.
  on(window, "pageshow", (e) => {
    if ((e as PageTransitionEvent).persisted) {
      setUserOpen(false);
      void setMobileOpen(false);
    }
  });

  // Theme toggle.
  const themeButton = header.querySelector<HTMLButtonElement>("[data-theme-toggle]");
  const showTheme = () => {
    if (!themeButton) return;
    const theme = getTheme();
    const shown = theme === "system" ? `system (${resolvedTheme(theme)})` : THEME_LABEL[theme];
    themeButton.dataset.current = theme;
    themeButton.setAttribute("aria-label", `Theme: ${shown}. Switch to ${THEME_LABEL[nextTheme(theme)]}`);
    themeButton.title = `Theme: ${shown}`;
  };
  if (themeButton) {
    showTheme();
    on(themeButton, "click", () => setTheme(nextTheme(getTheme())));
    cleanups.push(subscribePreferences(showTheme));
  }

  // Logout.
  const logoutForm = header.querySelector<HTMLFormElement>("[data-logout]");
  if (logoutForm) {
    on(logoutForm, "submit", (e) => {
      e.preventDefault();
      void logout(options);
    });
  }

  header.dataset.enhanced = "";
  return () => {
    trap?.deactivate();
    for (const c of cleanups.reverse()) c();
    delete header.dataset.enhanced;
  };
}

/** Ends the session (SPEC section 4 "Session"). Returns whether it worked. */
export async function logout(options: HeaderOptions = {}): Promise<boolean> {
  try {
    await apiRequest("POST", "/api/logout");
  } catch (error) {
    logError("Logout failed", "header", error);
    return false;
  }
  const message = { title: "Logged out", description: "You have been successfully logged out." };
  toast(message);
  toastAfterNavigation(message);
  clearFreeUsageCount();
  options.onLoggedOut?.();
  const navigate = options.navigate ?? ((url: string) => window.location.assign(url));
  setTimeout(() => navigate("/"), LOGOUT_REDIRECT_MS);
  return true;
}
