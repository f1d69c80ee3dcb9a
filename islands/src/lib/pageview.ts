/**
 * The page_view analytics event of SPEC section 7 (resourceType page; metadata path, title,
 * referrer), sent once per page at idle time so it never competes with the first paint.
 * The server keeps the path without its query, the referring site's host only, and no IP
 * address (src/services/analytics.rs). Browsers that ask not to be tracked (Global Privacy
 * Control, Do Not Track) send nothing.
 */
export function trackPageView(): void {
  const nav = navigator as Navigator & { globalPrivacyControl?: boolean };
  if (nav.globalPrivacyControl === true || nav.doNotTrack === "1") return;
  const body = {
    action: "page_view",
    resourceType: "page",
    resourceId: null,
    metadata: {
      path: location.pathname,
      title: document.title,
      referrer: document.referrer,
      userAgent: navigator.userAgent,
      timestamp: new Date().toISOString(),
    },
  };
  // keepalive: the event still goes out when the person leaves the page at once.
  void fetch("/api/analytics/track", {
    method: "POST",
    credentials: "include",
    keepalive: true,
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  }).catch(() => undefined);
}
