/**
 * Brings the server-rendered header (templates/partials/header.html) to life without React,
 * so pages without React islands stay light:
 *
 * - scrolled style: `is-scrolled` on the header after 10px of scroll;
 * - the user menu (disclosure button + panel);
 * - the mobile menu (shown at 768px and below by the CSS): a .menu-toggle button and a
 *   #mobile-menu panel built from the server's links, with focus trapped (focus-trap,
 *   fetched on first use) while open. Escape and a click outside close either menu, and
 *   both close when the page comes back from the back/forward cache;
 * - the theme toggle (light -> dark -> system);
 * - Logout: POST /api/logout, then a toast, the cached data and the free-usage counter
 *   cleared, and about 100 ms later the home page. A failure is logged and toasted ("Logout
 *   failed": SPEC 8's reading over SPEC 4's "only logged", see islands/README.md), since a
 *   person who believes they signed out of a shared computer must learn that they did not.
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
export const LOGOUT_FAILED = "You are still signed in. Please try again.";

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

  // Mobile menu: built here (without JavaScript the header keeps its plain links), a
  // .menu-toggle button in the bar and a #mobile-menu panel right after the header, with
  // the links, the account actions and the theme toggle. Focus is trapped in toggle + panel.
  const built = buildMobileMenu(header);
  const toggle = built?.toggle ?? null;
  const menu = built?.panel ?? null;
  const backdrop = built?.backdrop ?? null;
  if (menu) cleanups.push(() => menu.remove());
  if (backdrop) cleanups.push(() => backdrop.remove());
  if (toggle) cleanups.push(() => toggle.remove());
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
    menu.hidden = !open;
    if (backdrop) backdrop.hidden = !open;
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
    } else if (trap?.active) {
      trap.deactivate();
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

  // Theme toggles (the bar's and the mobile menu's).
  const themeButtons = [header, menu].flatMap((root) =>
    root ? Array.from(root.querySelectorAll<HTMLButtonElement>("[data-theme-toggle]")) : [],
  );
  const showTheme = () => {
    const theme = getTheme();
    const shown = theme === "system" ? `system (${resolvedTheme(theme)})` : THEME_LABEL[theme];
    for (const button of themeButtons) {
      button.dataset.current = theme;
      button.setAttribute("aria-label", `Theme: ${shown}. Switch to ${THEME_LABEL[nextTheme(theme)]}`);
      // The icon-only one's tooltip (lib/tooltip.ts): the short form.
      if (button.hasAttribute("data-tooltip")) button.dataset.tooltip = `Theme: ${shown}`;
      const label = button.querySelector(".theme-toggle-label");
      if (label) label.textContent = `Theme: ${THEME_LABEL[theme]}`;
    }
  };
  if (themeButtons.length) {
    showTheme();
    for (const button of themeButtons) on(button, "click", () => setTheme(nextTheme(getTheme())));
    cleanups.push(subscribePreferences(showTheme));
  }

  // Logout (the user menu's form and its copy in the mobile menu).
  for (const root of [header, menu]) {
    for (const form of root ? Array.from(root.querySelectorAll<HTMLFormElement>("[data-logout]")) : []) {
      on(form, "submit", (e) => {
        e.preventDefault();
        void logout(options);
      });
    }
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
    toast({ title: "Logout failed", description: LOGOUT_FAILED, variant: "destructive" });
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

const MENU_ICON =
  '<svg class="icon-open" viewBox="0 0 24 24" width="22" height="22" aria-hidden="true" focusable="false"><path d="M4 7h16M4 12h16M4 17h16" stroke="currentColor" stroke-width="2" stroke-linecap="round"/></svg>' +
  '<svg class="icon-close" viewBox="0 0 24 24" width="22" height="22" aria-hidden="true" focusable="false"><path d="M6 6l12 12M18 6L6 18" stroke="currentColor" stroke-width="2" stroke-linecap="round"/></svg>';

/** Copies an element without its ids (the copy lives next to the original). */
function copy<T extends Element>(el: T): T {
  const c = el.cloneNode(true) as T;
  for (const n of [c, ...Array.from(c.querySelectorAll("[id]"))]) n.removeAttribute("id");
  return c;
}

/**
 * Builds the mobile menu from the server-rendered header: the toggle goes into the bar,
 * the panel right after the header. Returns null when the header has no navigation.
 */
export function buildMobileMenu(
  header: HTMLElement,
): { toggle: HTMLButtonElement; panel: HTMLElement; backdrop: HTMLElement } | null {
  const inner = header.querySelector(".header-inner");
  const links = header.querySelector(".site-nav ul");
  if (!inner || !links) return null;

  const toggle = document.createElement("button");
  toggle.type = "button";
  toggle.className = "menu-toggle";
  toggle.dataset.navToggle = "";
  toggle.setAttribute("aria-expanded", "false");
  toggle.setAttribute("aria-controls", "mobile-menu");
  toggle.setAttribute("aria-label", "Open menu");
  toggle.dataset.tooltip = "";
  toggle.innerHTML = MENU_ICON;
  inner.append(toggle);

  const panel = document.createElement("div");
  panel.id = "mobile-menu";
  panel.className = "mobile-menu";
  panel.dataset.mobileMenu = "";
  panel.hidden = true;

  const nav = document.createElement("nav");
  nav.setAttribute("aria-label", "Main menu");
  nav.append(copy(links));
  panel.append(nav);

  const account = document.createElement("div");
  account.className = "mobile-menu-account";
  const userButton = header.querySelector("[data-user-menu-button]");
  const userPanel = header.querySelector("[data-user-menu-panel]");
  if (userButton && userPanel) {
    const who = document.createElement("p");
    who.className = "mobile-menu-user";
    for (const part of userButton.querySelectorAll(".user-avatar, .user-name")) who.append(copy(part));
    account.append(who);
    for (const item of Array.from(userPanel.children)) account.append(copy(item));
  } else {
    // Only what the bar hides on small screens (Login): Sign Up stays in the bar, so the open
    // menu does not show it twice.
    for (const a of header.querySelectorAll(".header-actions a.btn-ghost")) account.append(copy(a));
  }
  panel.append(account);

  const theme = header.querySelector("[data-theme-toggle]");
  if (theme) {
    const button = copy(theme);
    button.classList.add("theme-toggle-wide");
    // It says its theme in words: no tooltip needed.
    button.removeAttribute("data-tooltip");
    const label = document.createElement("span");
    label.className = "theme-toggle-label";
    button.append(label);
    panel.append(button);
  }

  // The page behind the open menu is dimmed; a tap on it closes the menu (the focus trap's
  // click outside).
  const backdrop = document.createElement("div");
  backdrop.className = "mobile-menu-backdrop";
  backdrop.dataset.mobileMenuBackdrop = "";
  backdrop.hidden = true;

  header.after(panel, backdrop);
  return { toggle, panel, backdrop };
}
