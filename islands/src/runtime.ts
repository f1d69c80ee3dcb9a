/**
 * The only script a page loads (templates/base.html adds it when the build exists). It
 *
 * 1. applies the theme and motion preferences and keeps them current;
 * 2. enhances the header (no React, see header/header.ts), renders the shared toast
 *    viewport and the offline banner, and records errors in the client log;
 * 3. at idle time, loads the installable-app module (pwa/client.ts: service worker,
 *    install card, notification prompt), still without React;
 * 4. finds `[data-island]` marks and mounts each one with React, lazily: the island's
 *    chunk and the React chunk are fetched only when a page has a mark, when it comes near
 *    the viewport (or at idle time, or at once; see `data-island-load` below).
 *
 * A mark: `<div data-island="Name" data-props='{"json":1}' [data-island-load="visible|idle|eager"]>fallback</div>`.
 * The fallback (server HTML) stays until the island renders. An unknown name logs a
 * warning and leaves the fallback in place.
 */
import { enhanceHeader } from "./header/header";
import { islands } from "./islands/index";
import { installGlobalErrorLog, logError, logWarning, setLogUser } from "./lib/log";
import { mountOfflineBanner } from "./lib/offline";
import { initPreferences } from "./lib/theme";
import { mountToaster, showPendingToast } from "./lib/toast";

type MountModule = typeof import("./mount");

let mountModule: Promise<MountModule> | null = null;
const loadMount = () => (mountModule ??= import("./mount"));

export type LoadStrategy = "visible" | "idle" | "eager";

function strategyOf(el: HTMLElement): LoadStrategy {
  const v = el.dataset.islandLoad;
  return v === "idle" || v === "eager" ? v : "visible";
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

async function mountIsland(el: HTMLElement): Promise<void> {
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
    mount(el, name, mod.default, readProps(el, name));
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
    if (strategy === "eager" || !observer) void mountIsland(el);
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

function start() {
  installGlobalErrorLog();
  initPreferences();
  mountToaster();
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
  idle(() => void import("./pwa/client").then((m) => m.startPwa({ signedIn })).catch((e) => logError("PWA module failed to load", "pwa", e)));
  const params = new URLSearchParams(location.search);
  if (params.get("debug") === "true" || params.get("vitals") === "true") {
    void import("./lib/debug").then((m) => m.showDebugOverlay(params));
  }
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start, { once: true });
else start();
