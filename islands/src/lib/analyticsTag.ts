/**
 * The third-party analytics tag an administrator chose in the studio (SPEC section 7; the
 * server side is src/services/analytics_tag.rs): Google Analytics 4, Plausible or Matomo.
 *
 * The page names it in `<meta name="reelfind-analytics" content="{provider, id, src,
 * endpoint?}">` only when one is configured; without it this module is never even fetched,
 * and no third-party request is made. The runtime loads it at idle time. It
 *
 * - does nothing when the browser asks not to be tracked (Global Privacy Control, Do Not Track);
 * - loads the provider's script with anonymised IP, no advertising features, no cookies and
 *   no automatic page view (GA4: consent mode with storage denied, `anonymize_ip`, Google
 *   signals and ad personalisation off, `send_page_view: false`; Plausible: the "manual"
 *   script, cookieless by design; Matomo: cookies disabled);
 * - sends one page view with the page's path (never its query: a query can carry an email
 *   address), the page-load time once the page has loaded, and an exception event for each
 *   error an island's error boundary catches (the `reelfind:exception` window event).
 */

export interface TagConfig {
  provider: "ga4" | "plausible" | "matomo";
  id: string;
  src: string;
  endpoint?: string;
}

/** The window event the error boundary sends (detail: `{ description, fatal }`). */
export const EXCEPTION_EVENT = "reelfind:exception";

export interface ExceptionDetail {
  description: string;
  fatal: boolean;
}

/** What each provider is told. */
interface Sender {
  pageView(path: string, title: string): void;
  loadTime(ms: number, path: string): void;
  exception(d: ExceptionDetail): void;
}

type TagWindow = Window & {
  dataLayer?: unknown[];
  gtag?: (...args: unknown[]) => void;
  plausible?: ((...args: unknown[]) => void) & { q?: unknown[] };
  _paq?: unknown[];
};

/** The tag the page names, or null. */
export function readTagConfig(doc: Document = document): TagConfig | null {
  const raw = doc.querySelector<HTMLMetaElement>('meta[name="reelfind-analytics"]')?.content;
  if (!raw) return null;
  try {
    const c = JSON.parse(raw) as Partial<TagConfig>;
    if ((c.provider === "ga4" || c.provider === "plausible" || c.provider === "matomo") && c.id && c.src) {
      return { provider: c.provider, id: c.id, src: c.src, endpoint: c.endpoint };
    }
  } catch {
    /* not ours */
  }
  return null;
}

/** The visitor's browser asks not to be tracked. */
export function trackingRefused(nav: Navigator = navigator): boolean {
  const n = nav as Navigator & { globalPrivacyControl?: boolean };
  return n.globalPrivacyControl === true || n.doNotTrack === "1";
}

function loadScript(doc: Document, src: string, attrs: Record<string, string> = {}): HTMLScriptElement {
  const s = doc.createElement("script");
  s.async = true;
  s.src = src;
  for (const [k, v] of Object.entries(attrs)) s.setAttribute(k, v);
  s.dataset.analyticsTag = "";
  doc.head.append(s);
  return s;
}

function ga4(c: TagConfig, w: TagWindow, doc: Document): Sender {
  const layer = (w.dataLayer = w.dataLayer ?? []);
  // gtag.js reads Arguments objects from the data layer, not arrays.
  const gtag = (w.gtag ??= function gtag() {
    // eslint-disable-next-line prefer-rest-params
    layer.push(arguments);
  });
  const location = `${w.location.origin}${w.location.pathname}`;
  gtag("consent", "default", {
    ad_storage: "denied",
    ad_user_data: "denied",
    ad_personalization: "denied",
    analytics_storage: "denied",
  });
  gtag("js", new Date());
  gtag("config", c.id, {
    anonymize_ip: true,
    allow_google_signals: false,
    allow_ad_personalization_signals: false,
    send_page_view: false,
    page_location: location,
  });
  loadScript(doc, c.src);
  return {
    pageView: (path, title) => gtag("event", "page_view", { page_path: path, page_location: location, page_title: title }),
    loadTime: (ms) => gtag("event", "timing_complete", { name: "load", value: ms, event_category: "Load Performance" }),
    exception: (d) => gtag("event", "exception", { description: d.description, fatal: d.fatal }),
  };
}

function plausible(c: TagConfig, w: TagWindow, doc: Document): Sender {
  const p = (w.plausible ??= Object.assign(
    function plausible() {
      // eslint-disable-next-line prefer-rest-params
      (p.q = p.q ?? []).push(arguments);
    },
    { q: [] as unknown[] },
  ));
  loadScript(doc, c.src, { "data-domain": c.id });
  const url = (path: string) => `${w.location.origin}${path}`;
  return {
    pageView: (path) => p("pageview", { u: url(path) }),
    loadTime: (ms, path) => p("Page Load Time", { u: url(path), props: { ms: String(ms), path } }),
    exception: (d) => p("Exception", { props: { description: d.description, fatal: String(d.fatal) } }),
  };
}

function matomo(c: TagConfig, w: TagWindow, doc: Document): Sender {
  const paq = (w._paq = w._paq ?? []);
  paq.push(["disableCookies"]);
  if (c.endpoint) paq.push(["setTrackerUrl", c.endpoint]);
  paq.push(["setSiteId", c.id]);
  loadScript(doc, c.src);
  return {
    pageView: (path, title) => {
      paq.push(["setCustomUrl", `${w.location.origin}${path}`]);
      paq.push(["setDocumentTitle", title]);
      paq.push(["trackPageView"]);
    },
    loadTime: (ms, path) => paq.push(["trackEvent", "Performance", "page-load-time", path, ms]),
    exception: (d) => paq.push(["trackEvent", "Exception", d.fatal ? "fatal" : "caught", d.description]),
  };
}

const SENDERS: Record<TagConfig["provider"], (c: TagConfig, w: TagWindow, doc: Document) => Sender> = {
  ga4,
  plausible,
  matomo,
};

/** Milliseconds from navigation start to the end of the load event (null before it). */
function pageLoadTime(w: Window): number | null {
  const nav = w.performance?.getEntriesByType?.("navigation")[0] as PerformanceNavigationTiming | undefined;
  if (!nav || !nav.loadEventEnd) return null;
  return Math.round(nav.loadEventEnd - nav.startTime);
}

/**
 * Starts the tag the page names (when there is one and the visitor allows it). Returns
 * whether it started. `w` and `doc` are for tests.
 */
export function startAnalyticsTag(w: Window = window, doc: Document = document): boolean {
  const config = readTagConfig(doc);
  if (!config || trackingRefused(w.navigator)) return false;
  const send = SENDERS[config.provider](config, w as TagWindow, doc);
  const path = w.location.pathname;
  send.pageView(path, doc.title);

  const reportLoad = () => {
    const ms = pageLoadTime(w);
    if (ms !== null) send.loadTime(ms, path);
  };
  // The load event's end is known only after it ran: wait a turn past it.
  if (doc.readyState === "complete" && pageLoadTime(w) !== null) reportLoad();
  else w.addEventListener("load", () => w.setTimeout(reportLoad, 0), { once: true });

  w.addEventListener(EXCEPTION_EVENT, (e) => {
    const d = (e as CustomEvent<ExceptionDetail>).detail;
    if (d && typeof d.description === "string") send.exception({ description: d.description.slice(0, 150), fatal: Boolean(d.fatal) });
  });
  return true;
}
