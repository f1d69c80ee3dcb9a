/**
 * The only script a page loads (templates/base.html adds it when the build exists). It
 *
 * 1. applies the theme and motion preferences and keeps them current;
 * 2. enhances the header (no React, see header/header.ts), renders the shared toast
 *    viewport and the offline banner, and records errors in the client log;
 * 3. at idle time, reports the page view (lib/pageview.ts) and loads the installable-app module (pwa/client.ts: service worker,
 *    install card, notification prompt), still without React;
 * 4. finds `[data-island]` marks and mounts each one with React, lazily: the island's
 *    chunk and the React chunk are fetched only when a page has a mark, when it comes near
 *    the viewport (or at idle time, or at once; see `data-island-load` below).
 *
 * A mark: `<div data-island="Name" data-props='{"json":1}' [data-island-load="visible|idle|eager|interaction"]>fallback</div>`.
 * The fallback (server HTML) stays until the island renders. An unknown name logs a
 * warning and leaves the fallback in place.
 *
 * `interaction` is for an island whose fallback is its own first view as working HTML (the
 * home page's uploader): nothing is fetched until the visitor acts. Pointing at it or
 * focusing into it fetches the code; choosing a file, dropping one or changing a choice in
 * it mounts the island, which receives what they did as the `handover` prop (the files,
 * and the checked radio values by name), and focus goes back to the same choice.
 */
import { enhanceHeader } from "./header/header";
import { islands } from "./islands/index";
import { animateFooterOnce } from "./lib/footer";
import { installGlobalErrorLog, logError, logWarning, setLogUser } from "./lib/log";
import { mountOfflineBanner } from "./lib/offline";
import { trackPageView } from "./lib/pageview";
import { initPreferences } from "./lib/theme";
import { mountToaster, showPendingToast } from "./lib/toast";

type MountModule = typeof import("./mount");

let mountModule: Promise<MountModule> | null = null;
const loadMount = () => (mountModule ??= import("./mount"));

export type LoadStrategy = "visible" | "idle" | "eager" | "interaction";

function strategyOf(el: HTMLElement): LoadStrategy {
  const v = el.dataset.islandLoad;
  return v === "idle" || v === "eager" || v === "interaction" ? v : "visible";
}

/** What a visitor did to an `interaction` island's server HTML before it took over. */
export interface Handover {
  files: File[];
  /** The checked radio (or selected option) of each named control. */
  values: Record<string, string>;
}

function readHandover(el: HTMLElement, dropped?: FileList | null): Handover {
  const files: File[] = dropped ? Array.from(dropped) : [];
  const values: Record<string, string> = {};
  for (const input of Array.from(el.querySelectorAll<HTMLInputElement | HTMLSelectElement>("input, select"))) {
    if (input instanceof HTMLInputElement && input.type === "file") {
      if (!dropped && input.files) files.push(...Array.from(input.files));
    } else if (input.name && (!(input instanceof HTMLInputElement) || !["radio", "checkbox"].includes(input.type) || input.checked)) {
      values[input.name] = input.value;
    }
  }
  return { files, values };
}

/** Waits for the mark to load on the visitor's first real action (see the module docs). */
function onInteraction(el: HTMLElement, name: string): void {
  const warm = () => {
    const loader = Object.hasOwn(islands, name) ? islands[name] : undefined;
    void Promise.all([loadMount(), loader?.()]).catch(() => undefined);
  };
  let warmed = false;
  const prefetch = () => {
    if (!warmed) warm();
    warmed = true;
  };
  for (const type of ["pointerenter", "touchstart", "focusin"] as const) el.addEventListener(type, prefetch, { once: true, passive: true });
  let taken = false;
  let dropped: FileList | null = null;
  const take = (focused?: HTMLInputElement) => {
    if (taken) return;
    taken = true;
    void mountIsland(el, () => readHandover(el, dropped)).then(() => {
      el.removeEventListener("change", onChange);
      el.removeEventListener("drop", onDrop);
      el.removeEventListener("dragover", onDragOver);
      if (!focused) return;
      // Once the island has replaced the control that had focus, its twin gets focus.
      const deadline = performance.now() + 3000;
      const refocus = () => {
        const twin = focused.isConnected ? null : el.querySelector<HTMLInputElement>(`input[type="${focused.type}"][value="${CSS.escape(focused.value)}"]`);
        if (twin) twin.focus();
        else if (performance.now() < deadline) requestAnimationFrame(refocus);
      };
      refocus();
    });
  };
  // Until the island has taken over, the server HTML is the form: changes and drops on it
  // are what the island starts from.
  const onChange = (e: Event) => {
    if (el.dataset.islandState === "mounted") return;
    const t = e.target as HTMLInputElement;
    take(t.type === "radio" && document.activeElement === t ? t : undefined);
  };
  const onDragOver = (e: DragEvent) => {
    if (el.dataset.islandState !== "mounted") e.preventDefault();
  };
  const onDrop = (e: DragEvent) => {
    if (el.dataset.islandState === "mounted") return;
    e.preventDefault();
    dropped = e.dataTransfer?.files ?? null;
    take();
  };
  el.addEventListener("change", onChange);
  el.addEventListener("dragover", onDragOver);
  el.addEventListener("drop", onDrop);
}

function readProps(el: HTMLElement, name: string): Record<string, unknown> {
  const raw = el.dataset.props;
  if (!raw) return {};
  try {
    const parsed: unknown = JSON.parse(raw);
    return parsed && typeof parsed === "object" ? (parsed as Record<string, unknown>) : {};
  } catch (error) {
    logError(`Island "${name}" has invalid data-props JSON; mounting it with no props`, "islands", error);
    return {};
  }
}

/**
 * Mounts a mark. `handover` (interaction islands) is read when the code has arrived, right
 * before the island replaces the server HTML (synchronously then), so nothing the visitor
 * does meanwhile is lost.
 */
async function mountIsland(el: HTMLElement, handover?: () => Handover): Promise<void> {
  if (el.dataset.islandState) return;
  const name = el.dataset.island ?? "";
  const loader = Object.hasOwn(islands, name) ? islands[name] : undefined;
  if (!loader) {
    el.dataset.islandState = "missing";
    logWarning(
      `No island named "${name}" is registered in islands/src/islands/index.ts; the server HTML stays as it is.`,
      "islands",
    );
    return;
  }
  el.dataset.islandState = "loading";
  try {
    const [{ mount }, mod] = await Promise.all([loadMount(), loader()]);
    if (handover) mount(el, name, mod.default, { ...readProps(el, name), handover: handover() }, { sync: true });
    else mount(el, name, mod.default, readProps(el, name));
    el.dataset.islandState = "mounted";
  } catch (error) {
    el.dataset.islandState = "failed";
    logError(`Island "${name}" failed to load`, "islands", error);
  }
}

const idle = (fn: () => void) =>
  "requestIdleCallback" in window ? requestIdleCallback(fn, { timeout: 2000 }) : setTimeout(fn, 200);

/** Schedules every island mark under `root` by its load strategy. */
export function mountIslands(root: ParentNode = document): void {
  const marks = Array.from(root.querySelectorAll<HTMLElement>("[data-island]"));
  if (marks.length === 0) return;
  const observer =
    "IntersectionObserver" in window
      ? new IntersectionObserver(
          (entries) => {
            for (const entry of entries) {
              if (entry.isIntersecting) {
                observer?.unobserve(entry.target);
                void mountIsland(entry.target as HTMLElement);
              }
            }
          },
          { rootMargin: "300px 0px" },
        )
      : null;
  for (const el of marks) {
    const strategy = strategyOf(el);
    if (strategy === "interaction") onInteraction(el, el.dataset.island ?? "");
    else if (strategy === "eager" || !observer) void mountIsland(el);
    else if (strategy === "idle") idle(() => void mountIsland(el));
    else {
      observer.observe(el);
      // Islands inside hidden parts of the page never intersect; mount them when idle.
      idle(() => {
        if (el.offsetParent === null && !el.dataset.islandState) {
          observer.unobserve(el);
          void mountIsland(el);
        }
      });
    }
  }
}

/** Tooltips (lib/tooltip.ts) are fetched when a pointer or the keyboard first reaches an element
 *  that has one (`data-tooltip`); that first event is handed over. Their 700 ms delay hides the
 *  fetch. */
function lazyTooltips() {
  const types = ["pointerover", "focusin"];
  const first = (e: Event) => {
    if (!(e.target instanceof Element) || !e.target.closest("[data-tooltip]")) return;
    for (const t of types) document.removeEventListener(t, first, true);
    void import("./lib/tooltip").then((m) => m.installTooltips(document, e)).catch(() => undefined);
  };
  for (const t of types) document.addEventListener(t, first, true);
}

function start() {
  installGlobalErrorLog();
  initPreferences();
  mountToaster();
  lazyTooltips();
  animateFooterOnce(document.querySelector<HTMLElement>(".site-footer"));
  mountOfflineBanner();
  const header = document.querySelector<HTMLElement>("[data-header]");
  if (header) {
    setLogUser(header.dataset.userId ?? null);
    enhanceHeader(header, {
      onLoggedOut: () => {
        void mountModule?.then((m) => m.queryClient.clear());
      },
    });
  }
  showPendingToast();
  mountIslands();
  const signedIn = Boolean(header?.dataset.userId);
  const adminId = header && "userAdmin" in header.dataset ? (header.dataset.userId ?? null) : null;
  if (signedIn) {
    // Something that can earn an achievement happened: ask the server (lib/achievements.ts).
    for (const type of ["reelfind:identified", "reelfind:achievement-check"]) {
      window.addEventListener(type, () => void import("./lib/achievements").then((m) => m.checkAchievements()).catch(() => undefined));
    }
  }
  idle(trackPageView);
  // The admin's third-party analytics tag, only when the page names one (lib/analyticsTag.ts).
  if (document.querySelector('meta[name="reelfind-analytics"]')) {
    idle(() => void import("./lib/analyticsTag").then((m) => m.startAnalyticsTag()).catch(() => undefined));
  }
  idle(() => void import("./pwa/client").then((m) => m.startPwa({ signedIn, adminId })).catch((e) => logError("PWA module failed to load", "pwa", e)));
  const params = new URLSearchParams(location.search);
  if (params.get("debug") === "true" || params.get("vitals") === "true") {
    void import("./lib/debug").then((m) => m.showDebugOverlay(params));
  }
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start, { once: true });
else start();
