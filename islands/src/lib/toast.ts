/**
 * Toasts: one at a time (a new toast replaces the one showing), variants "default" and
 * "destructive", 5 s by default. The store is plain TypeScript so the header and React
 * islands share one; the runtime renders it once per page into two persistent live regions
 * (role=status for default, role=alert for destructive), so a page with several islands
 * never shows duplicates, and a page without React can still show a toast.
 *
 * From anywhere: `toast({ title, description, variant, duration })`. React islands may
 * use `useToast()` from `./useToast`.
 */

export type ToastVariant = "default" | "destructive";

export interface ToastInput {
  title?: string;
  description?: string;
  variant?: ToastVariant;
  /** Milliseconds until it closes by itself; default 5000; Infinity keeps it open. */
  duration?: number;
}

export interface ToastItem extends Required<Pick<ToastInput, "variant" | "duration">> {
  id: string;
  title?: string;
  description?: string;
  open: boolean;
}

/** Only one toast is shown at a time (SPEC section 4). */
export const TOAST_LIMIT = 1;
export const TOAST_DEFAULT_DURATION = 5000;
/** A dismissed toast leaves the store this long after it closed (SPEC section 4). */
export const TOAST_REMOVE_DELAY = 1_000_000;

type Listener = (toasts: readonly ToastItem[]) => void;

let toasts: ToastItem[] = [];
const listeners = new Set<Listener>();
const closeTimers = new Map<string, ReturnType<typeof setTimeout>>();
const removeTimers = new Map<string, ReturnType<typeof setTimeout>>();
let seq = 0;

function emit() {
  for (const l of listeners) l(toasts);
}

export function getToasts(): readonly ToastItem[] {
  return toasts;
}

export function subscribeToasts(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function scheduleRemoval(id: string) {
  if (removeTimers.has(id)) return;
  removeTimers.set(
    id,
    setTimeout(() => {
      removeTimers.delete(id);
      toasts = toasts.filter((t) => t.id !== id);
      emit();
    }, TOAST_REMOVE_DELAY),
  );
}

/** Closes one toast, or every toast when no id is given. */
export function dismiss(id?: string): void {
  for (const t of toasts) {
    if (id === undefined || t.id === id) {
      const timer = closeTimers.get(t.id);
      if (timer) clearTimeout(timer);
      closeTimers.delete(t.id);
      scheduleRemoval(t.id);
    }
  }
  toasts = toasts.map((t) => (id === undefined || t.id === id ? { ...t, open: false } : t));
  emit();
}

/** Shows a toast, replacing whatever toast is showing. Returns its id and a dismiss function. */
export function toast(input: ToastInput): { id: string; dismiss: () => void } {
  seq += 1;
  const id = `toast-${seq}`;
  const item: ToastItem = {
    id,
    title: input.title,
    description: input.description,
    variant: input.variant ?? "default",
    duration: input.duration ?? TOAST_DEFAULT_DURATION,
    open: true,
  };
  for (const t of toasts) {
    const timer = closeTimers.get(t.id);
    if (timer) clearTimeout(timer);
    closeTimers.delete(t.id);
  }
  toasts = [item, ...toasts].slice(0, TOAST_LIMIT);
  if (Number.isFinite(item.duration)) {
    closeTimers.set(id, setTimeout(() => dismiss(id), item.duration));
  }
  emit();
  return { id, dismiss: () => dismiss(id) };
}

/** Stops the close timer while the pointer or focus is on the toast. */
export function pause(id: string): void {
  const timer = closeTimers.get(id);
  if (timer) clearTimeout(timer);
  closeTimers.delete(id);
}

/** Restarts the close timer after a pause. */
export function resume(id: string): void {
  const t = toasts.find((x) => x.id === id);
  if (!t || !t.open || closeTimers.has(id) || !Number.isFinite(t.duration)) return;
  closeTimers.set(id, setTimeout(() => dismiss(id), t.duration));
}

/** Test helper: forget every toast and timer. */
export function resetToasts(): void {
  for (const m of [closeTimers, removeTimers]) {
    for (const timer of m.values()) clearTimeout(timer);
    m.clear();
  }
  toasts = [];
  emit();
}

const FLASH_KEY = "reelfind:flash-toast";

/** Keeps a toast for the next page this tab loads (used right before a navigation). */
export function toastAfterNavigation(input: ToastInput): void {
  try {
    sessionStorage.setItem(FLASH_KEY, JSON.stringify(input));
  } catch {
    /* storage unavailable: the toast is simply not carried over */
  }
}

/** Shows the toast an earlier page left for this one, if any. */
export function showPendingToast(): void {
  let raw: string | null = null;
  try {
    raw = sessionStorage.getItem(FLASH_KEY);
    sessionStorage.removeItem(FLASH_KEY);
  } catch {
    return;
  }
  if (!raw) return;
  try {
    toast(JSON.parse(raw) as ToastInput);
  } catch {
    /* a malformed entry is dropped */
  }
}

/** Space kept between a toast and the screen's edge, the header, or a button (px). */
const EDGE_GAP = 16;

export type ToastSide = "top" | "bottom";

/**
 * Where the toasts go so that they cover no primary button: at the bottom (the default), or
 * at the top under the header when at the bottom they would cover one and at the top they
 * would not. `box` is the toasts' horizontal extent and height; `buttons` the primary buttons
 * on screen.
 */
export function chooseToastSide(
  box: { left: number; right: number; height: number },
  viewportHeight: number,
  headerHeight: number,
  buttons: ReadonlyArray<Pick<DOMRect, "top" | "bottom" | "left" | "right">>,
): ToastSide {
  const covers = (top: number) =>
    buttons.some((b) => b.bottom > top && b.top < top + box.height && b.right > box.left && b.left < box.right);
  const bottomTop = viewportHeight - EDGE_GAP - box.height;
  if (!covers(bottomTop)) return "bottom";
  return covers(headerHeight + EDGE_GAP) ? "bottom" : "top";
}

/** The primary buttons a person can see now (the page's and an open dialog's). */
function visiblePrimaryButtons(): DOMRect[] {
  const out: DOMRect[] = [];
  for (const el of document.querySelectorAll<HTMLElement>(".btn-primary, button[type=submit]")) {
    if (el.closest("[data-toaster]")) continue;
    const r = el.getBoundingClientRect();
    if (r.width > 0 && r.height > 0 && r.bottom > 0 && r.top < window.innerHeight) out.push(r);
  }
  return out;
}

const popoverSupported = () => typeof HTMLElement !== "undefined" && "showPopover" in HTMLElement.prototype;

/**
 * Renders the store into `root` (created at the end of <body> when not given). Two
 * persistent live regions, so screen readers announce new toasts.
 *
 * The viewport is a manual popover: while a toast shows it is in the top layer, and it is
 * lifted again whenever a dialog opens, so a toast is never under a modal dialog's dimmed
 * backdrop. While a modal dialog is open the viewport lives inside it (the rest of the page is
 * inert then: a toast outside could be read but not closed), and back in <body> after.
 * It moves to the top of the screen when at the bottom it would cover a primary button (a
 * phone's "Create Account"), checked when a toast shows, on scroll and on resize.
 */
export function mountToaster(root?: HTMLElement): () => void {
  const host = root ?? document.createElement("div");
  host.className = "toast-viewport";
  host.setAttribute("data-toaster", "");
  const popover = popoverSupported();
  if (popover) host.setAttribute("popover", "manual");
  const polite = document.createElement("div");
  polite.setAttribute("role", "status");
  polite.setAttribute("aria-live", "polite");
  polite.setAttribute("aria-atomic", "true");
  const assertive = document.createElement("div");
  assertive.setAttribute("role", "alert");
  assertive.setAttribute("aria-live", "assertive");
  assertive.setAttribute("aria-atomic", "true");
  host.replaceChildren(polite, assertive);
  if (!root) document.body.append(host);

  let showing = false;
  const place = () => {
    if (!showing) return;
    const r = host.getBoundingClientRect();
    if (r.height === 0) return;
    const headerHeight = document.querySelector(".site-header")?.getBoundingClientRect().bottom ?? 0;
    const side = chooseToastSide(r, window.innerHeight, Math.max(0, headerHeight), visiblePrimaryButtons());
    host.dataset.side = side;
  };
  let frame = 0;
  const placeSoon = () => {
    if (!showing || frame) return;
    frame = requestAnimationFrame(() => {
      frame = 0;
      place();
    });
  };
  /** The topmost open modal dialog, or null. */
  const modalDialog = (): HTMLDialogElement | null => {
    let open: HTMLDialogElement[] = [];
    try {
      open = Array.from(document.querySelectorAll<HTMLDialogElement>("dialog:modal"));
    } catch {
      /* no :modal (an old browser, jsdom): such browsers keep the viewport in <body> */
    }
    return open.at(-1) ?? null;
  };
  /** Puts the viewport where it can be used: in the open modal dialog, else in <body>.
   *  Returns whether it moved. A viewport the caller placed (`root`) stays. */
  const home = (): boolean => {
    if (root) return false;
    const want = modalDialog() ?? document.body;
    if (host.parentElement === want) return false;
    want.append(host);
    return true;
  };
  /** Into the top layer, above whatever is there now (a dialog opened after the toast). */
  const raise = () => {
    if (!popover || !host.isConnected) return;
    try {
      if (host.matches(":popover-open")) host.hidePopover();
      host.showPopover();
    } catch {
      /* not in the document, or the browser refused: it stays where the CSS puts it */
    }
  };
  const lower = () => {
    if (!popover) return;
    try {
      if (host.matches(":popover-open")) host.hidePopover();
    } catch {
      /* already hidden */
    }
  };

  const render = (items: readonly ToastItem[]) => {
    const shown = items.filter((t) => t.open);
    let added = false;
    for (const region of [polite, assertive]) {
      const want = shown.filter((t) => (region === assertive) === (t.variant === "destructive"));
      const present = new Set<string>();
      for (const el of Array.from(region.children) as HTMLElement[]) {
        if (!want.some((t) => t.id === el.dataset.toastId)) el.remove();
        else present.add(el.dataset.toastId ?? "");
      }
      for (const t of want) {
        if (!present.has(t.id)) {
          region.append(renderToast(t));
          added = true;
        }
      }
    }
    showing = shown.length > 0;
    if (!showing) {
      delete host.dataset.side;
      lower();
    } else if (added) {
      delete host.dataset.side;
      home();
      raise();
      place();
    }
  };
  render(toasts);
  const unsubscribe = subscribeToasts(render);

  // A dialog opened or closed (or went away with its island) while a toast shows: follow it.
  const dialogs = new MutationObserver((records) => {
    if (!showing) return;
    const opened = records.some((m) => m.target instanceof HTMLDialogElement && m.target.open);
    if (home() || opened) {
      raise();
      placeSoon();
    }
  });
  dialogs.observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ["open"] });
  window.addEventListener("scroll", placeSoon, { passive: true, capture: true });
  window.addEventListener("resize", placeSoon, { passive: true });
  return () => {
    unsubscribe();
    dialogs.disconnect();
    window.removeEventListener("scroll", placeSoon, { capture: true });
    window.removeEventListener("resize", placeSoon);
    if (frame) cancelAnimationFrame(frame);
    lower();
    host.remove();
  };
}

function renderToast(t: ToastItem): HTMLElement {
  const el = document.createElement("div");
  el.className = `toast toast-${t.variant}`;
  el.dataset.toastId = t.id;
  const body = document.createElement("div");
  body.className = "toast-body";
  if (t.title) {
    const title = document.createElement("p");
    title.className = "toast-title";
    title.textContent = t.title;
    body.append(title);
  }
  if (t.description) {
    const desc = document.createElement("p");
    desc.className = "toast-description";
    desc.textContent = t.description;
    body.append(desc);
  }
  const close = document.createElement("button");
  close.type = "button";
  close.className = "toast-close";
  close.setAttribute("aria-label", "Close notification");
  close.dataset.tooltip = "Close";
  close.innerHTML = '<svg viewBox="0 0 24 24" width="16" height="16" aria-hidden="true"><path d="M6 6l12 12M18 6L6 18" stroke="currentColor" stroke-width="2" stroke-linecap="round"/></svg>';
  close.addEventListener("click", () => dismiss(t.id));
  el.append(body, close);
  el.addEventListener("pointerenter", () => pause(t.id));
  el.addEventListener("pointerleave", () => resume(t.id));
  el.addEventListener("focusin", () => pause(t.id));
  el.addEventListener("focusout", () => resume(t.id));
  return el;
}
