/**
 * Tooltips for icon-only buttons and links (SPEC section 9: delay 700 ms, skip delay 300 ms).
 *
 * Mark an element with `data-tooltip="Text"`, or `data-tooltip` alone to show its
 * `aria-label` (read when shown, so a label that changes, like the theme toggle's, stays
 * right). The text only repeats the element's accessible name, so it is not wired up as a
 * description.
 *
 * - A mouse or pen resting on the element shows it after 700 ms; keyboard focus
 *   (`:focus-visible`) does too. A touch never does (a tap is the action itself).
 * - Skip delay: within 300 ms of a tooltip closing, the next one opens at once (running the
 *   pointer along a row of icons).
 * - It closes when the pointer leaves (after a short grace, so the pointer can move onto the
 *   tooltip itself), on blur, on a press, and with Escape (WCAG 1.4.13); it follows its element
 *   when the page scrolls, and closes when the element leaves the screen.
 * - One element, in the top layer while shown (a manual popover), so it is above dialogs.
 *
 * Installed through document-level listeners, so islands and server HTML alike only need the
 * attribute. The runtime fetches this module when a pointer or the keyboard first reaches a
 * marked element and hands that first event over (`first`).
 */

export const TOOLTIP_DELAY_MS = 700;
export const TOOLTIP_SKIP_DELAY_MS = 300;
/** How long the pointer may take to cross from the element onto its tooltip. */
const LEAVE_GRACE_MS = 100;
const GAP = 8;

export function installTooltips(doc: Document = document, first?: Event): () => void {
  const win = doc.defaultView ?? window;
  let tip: HTMLElement | null = null;
  let target: HTMLElement | null = null;
  let shown = false;
  let closedAt = -Infinity;
  let openTimer = 0;
  let closeTimer = 0;

  const element = () => {
    if (tip) return tip;
    tip = doc.createElement("div");
    tip.className = "tooltip";
    tip.id = "reelfind-tooltip";
    tip.setAttribute("role", "tooltip");
    tip.dataset.testid = "tooltip";
    if ("showPopover" in tip) tip.setAttribute("popover", "manual");
    tip.hidden = true;
    tip.addEventListener("pointerenter", () => win.clearTimeout(closeTimer));
    tip.addEventListener("pointerleave", () => scheduleClose());
    doc.body.append(tip);
    return tip;
  };

  const textOf = (el: HTMLElement) => (el.dataset.tooltip || el.getAttribute("aria-label") || "").trim();

  const place = (el: HTMLElement, box: HTMLElement) => {
    const r = el.getBoundingClientRect();
    const w = box.offsetWidth;
    const h = box.offsetHeight;
    const vw = doc.documentElement.clientWidth;
    const below = r.bottom + GAP + h <= win.innerHeight;
    const top = below ? r.bottom + GAP : Math.max(GAP, r.top - GAP - h);
    const left = Math.min(Math.max(GAP, r.left + r.width / 2 - w / 2), Math.max(GAP, vw - w - GAP));
    box.style.left = `${Math.round(left)}px`;
    box.style.top = `${Math.round(top)}px`;
    box.dataset.side = below ? "bottom" : "top";
  };

  const open = () => {
    win.clearTimeout(openTimer);
    if (!target || !target.isConnected) return;
    const text = textOf(target);
    if (!text) return;
    const box = element();
    box.textContent = text;
    box.hidden = false;
    try {
      if (box.matches(":popover-open")) box.hidePopover();
      box.showPopover?.();
    } catch {
      /* no popover support: a fixed element with a high z-index (islands.css) */
    }
    place(target, box);
    shown = true;
  };

  const close = () => {
    win.clearTimeout(openTimer);
    win.clearTimeout(closeTimer);
    if (shown) closedAt = performance.now();
    shown = false;
    target = null;
    if (!tip) return;
    try {
      if (tip.matches(":popover-open")) tip.hidePopover();
    } catch {
      /* already hidden */
    }
    tip.hidden = true;
  };

  const scheduleOpen = (el: HTMLElement) => {
    win.clearTimeout(closeTimer);
    if (el === target && (shown || openTimer)) return;
    const skipping = shown || performance.now() - closedAt < TOOLTIP_SKIP_DELAY_MS;
    if (shown) close();
    target = el;
    win.clearTimeout(openTimer);
    if (skipping) open();
    else openTimer = win.setTimeout(() => {
      openTimer = 0;
      open();
    }, TOOLTIP_DELAY_MS);
  };

  function scheduleClose() {
    win.clearTimeout(closeTimer);
    if (!shown) {
      win.clearTimeout(openTimer);
      openTimer = 0;
      target = null;
      return;
    }
    closeTimer = win.setTimeout(close, LEAVE_GRACE_MS);
  }

  const marked = (node: EventTarget | null) =>
    node instanceof Element ? (node.closest("[data-tooltip]") as HTMLElement | null) : null;

  const onPointerOver = (e: Event) => {
    const pe = e as PointerEvent;
    if (pe.pointerType === "touch") return;
    const el = marked(pe.target);
    if (el) scheduleOpen(el);
  };
  const onPointerOut = (e: Event) => {
    const pe = e as PointerEvent;
    const el = marked(pe.target);
    if (!el || el !== target) return;
    const to = pe.relatedTarget as Node | null;
    if (to && (el.contains(to) || tip?.contains(to))) return;
    scheduleClose();
  };
  const onFocusIn = (e: Event) => {
    const el = marked(e.target);
    if (!el) return;
    let visible = true;
    try {
      visible = el.matches(":focus-visible");
    } catch {
      /* an old browser: show it */
    }
    if (visible) scheduleOpen(el);
  };
  const onFocusOut = (e: Event) => {
    if (marked(e.target) === target) close();
  };
  const onKey = (e: Event) => {
    if ((e as KeyboardEvent).key === "Escape" && (shown || openTimer)) close();
  };
  const onPress = () => close();
  let frame = 0;
  const onScroll = () => {
    if (!shown || frame) return;
    frame = win.requestAnimationFrame(() => {
      frame = 0;
      if (!shown || !target || !tip) return;
      const r = target.getBoundingClientRect();
      if (r.bottom < 0 || r.top > win.innerHeight || !target.isConnected) close();
      else place(target, tip);
    });
  };

  const listeners: Array<[EventTarget, string, (e: Event) => void, boolean | AddEventListenerOptions]> = [
    [doc, "pointerover", onPointerOver, true],
    [doc, "pointerout", onPointerOut, true],
    [doc, "focusin", onFocusIn, true],
    [doc, "focusout", onFocusOut, true],
    [doc, "keydown", onKey, true],
    [doc, "pointerdown", onPress, true],
    [win, "scroll", onScroll, { capture: true, passive: true }],
  ];
  for (const [t, type, fn, opts] of listeners) t.addEventListener(type, fn, opts);
  // The event that brought this module in, if the pointer or focus is still there.
  const firstEl = first ? marked(first.target) : null;
  if (first && firstEl) {
    if (first.type === "focusin" && firstEl.contains(doc.activeElement)) onFocusIn(first);
    else if (first.type === "pointerover" && firstEl.matches(":hover")) onPointerOver(first);
  }
  return () => {
    close();
    if (frame) win.cancelAnimationFrame(frame);
    for (const [t, type, fn, opts] of listeners) t.removeEventListener(type, fn, opts);
    tip?.remove();
    tip = null;
  };
}
