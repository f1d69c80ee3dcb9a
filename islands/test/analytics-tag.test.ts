import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EXCEPTION_EVENT, readTagConfig, startAnalyticsTag, trackingRefused } from "../src/lib/analyticsTag";

type W = Window & { dataLayer?: IArguments[]; plausible?: { q?: IArguments[] }; _paq?: unknown[][] };

function page(content: object | null) {
  document.head.innerHTML = content ? `<meta name="reelfind-analytics" content='${JSON.stringify(content)}'>` : "";
  document.title = "Blog - Reelfind";
}

beforeEach(() => {
  const w = window as W;
  delete w.dataLayer;
  delete (w as { gtag?: unknown }).gtag;
  delete w.plausible;
  delete w._paq;
  history.replaceState(null, "", "/blog?search=me%40example.com");
});
afterEach(() => {
  document.head.innerHTML = "";
  Object.defineProperty(navigator, "globalPrivacyControl", { value: undefined, configurable: true });
});

const calls = (w: W) => (w.dataLayer ?? []).map((a) => Array.from(a));

describe("the admin's analytics tag (SPEC section 7)", () => {
  it("does nothing without a configured tag", () => {
    page(null);
    expect(readTagConfig()).toBeNull();
    expect(startAnalyticsTag()).toBe(false);
    expect(document.querySelectorAll("script")).toHaveLength(0);
  });

  it("GA4: consent denied, anonymised IP, no ads, no automatic page view, then the page's path", () => {
    page({ provider: "ga4", id: "G-TEST123", src: "https://www.googletagmanager.com/gtag/js?id=G-TEST123" });
    expect(startAnalyticsTag()).toBe(true);
    const script = document.querySelector<HTMLScriptElement>("script[data-analytics-tag]")!;
    expect(script.src).toBe("https://www.googletagmanager.com/gtag/js?id=G-TEST123");
    expect(script.async).toBe(true);
    const c = calls(window as W);
    expect(c[0]).toEqual([
      "consent",
      "default",
      { ad_storage: "denied", ad_user_data: "denied", ad_personalization: "denied", analytics_storage: "denied" },
    ]);
    const config = c.find((x) => x[0] === "config")!;
    expect(config[1]).toBe("G-TEST123");
    expect(config[2]).toMatchObject({
      anonymize_ip: true,
      allow_google_signals: false,
      allow_ad_personalization_signals: false,
      send_page_view: false,
      page_location: "http://localhost:3000/blog",
    });
    const view = c.find((x) => x[0] === "event" && x[1] === "page_view")!;
    expect(view[2]).toEqual({ page_path: "/blog", page_location: "http://localhost:3000/blog", page_title: "Blog - Reelfind" });
    expect(JSON.stringify(c)).not.toContain("example.com"); // the query stays home

    window.dispatchEvent(new CustomEvent(EXCEPTION_EVENT, { detail: { description: "boom", fatal: true } }));
    expect(calls(window as W).at(-1)).toEqual(["event", "exception", { description: "boom", fatal: true }]);
  });

  it("Plausible: the manual script with the site's domain and a page view with the path", () => {
    page({ provider: "plausible", id: "reelfind.example", src: "https://plausible.io/js/script.manual.js" });
    startAnalyticsTag();
    const script = document.querySelector<HTMLScriptElement>("script[data-analytics-tag]")!;
    expect(script.getAttribute("data-domain")).toBe("reelfind.example");
    const q = ((window as W).plausible?.q ?? []).map((a) => Array.from(a));
    expect(q[0]).toEqual(["pageview", { u: "http://localhost:3000/blog" }]);
  });

  it("Matomo: cookies off, its tracker and site, then the page view", () => {
    page({ provider: "matomo", id: "7", src: "https://m.example/matomo.js", endpoint: "https://m.example/matomo.php" });
    startAnalyticsTag();
    expect((window as W)._paq).toEqual([
      ["disableCookies"],
      ["setTrackerUrl", "https://m.example/matomo.php"],
      ["setSiteId", "7"],
      ["setCustomUrl", "http://localhost:3000/blog"],
      ["setDocumentTitle", "Blog - Reelfind"],
      ["trackPageView"],
    ]);
  });

  it("loads nothing when the browser asks not to be tracked", () => {
    page({ provider: "ga4", id: "G-TEST123", src: "https://www.googletagmanager.com/gtag/js?id=G-TEST123" });
    Object.defineProperty(navigator, "globalPrivacyControl", { value: true, configurable: true });
    expect(trackingRefused()).toBe(true);
    expect(startAnalyticsTag()).toBe(false);
    expect(document.querySelectorAll("script")).toHaveLength(0);
    expect((window as W).dataLayer).toBeUndefined();
  });
});
