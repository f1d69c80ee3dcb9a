import { describe, expect, it } from "vitest";
import {
  base64UrlToBytes,
  cacheableDataUrl,
  installLabel,
  movieImageUrls,
  INSTALL_PROMPT_DELAY_MS,
  onboardingNext,
  parsePushPayload,
  shouldShowNotificationPrompt,
  strategyFor,
  SW_UPDATE_INTERVAL_MS,
  swStatusOf,
  WELCOME_TEST_DELAY_MS,
} from "../src/pwa/rules";

const none = { notificationPromptShown: null, notificationPromptDismissed: null, hasIdentificationHistory: null };
const env = { supported: true, secure: true, permission: "default" as NotificationPermission, flags: none };

describe("notification prompt (SPEC 4)", () => {
  it("shows once when supported, secure and no flag is stored", () => {
    expect(shouldShowNotificationPrompt(env)).toBe(true);
  });
  it("never without support or a secure page", () => {
    expect(shouldShowNotificationPrompt({ ...env, supported: false })).toBe(false);
    expect(shouldShowNotificationPrompt({ ...env, secure: false })).toBe(false);
  });
  it("never when any of the three flags exists, whatever its value", () => {
    for (const key of Object.keys(none)) {
      expect(shouldShowNotificationPrompt({ ...env, flags: { ...none, [key]: "false" } })).toBe(false);
    }
  });
  it("not again once the browser has an answer", () => {
    expect(shouldShowNotificationPrompt({ ...env, permission: "granted" })).toBe(false);
    expect(shouldShowNotificationPrompt({ ...env, permission: "denied" })).toBe(false);
  });
});

describe("onboarding steps (SPEC 4)", () => {
  it("welcome → benefits → permission → success", () => {
    let s = onboardingNext("welcome", "next");
    expect(s).toBe("benefits");
    s = onboardingNext(s, "enable");
    expect(s).toBe("permission");
    expect(onboardingNext(s, "granted")).toBe("success");
  });
  it("declined on failure, skip or unsupported push", () => {
    expect(onboardingNext("permission", "failed")).toBe("declined");
    expect(onboardingNext("welcome", "skip")).toBe("declined");
    expect(onboardingNext("benefits", "skip")).toBe("declined");
    expect(onboardingNext("benefits", "unsupported")).toBe("declined");
  });
  it("ignores events that do not belong to a step", () => {
    expect(onboardingNext("welcome", "granted")).toBe("welcome");
    expect(onboardingNext("success", "skip")).toBe("success");
    expect(onboardingNext("declined", "next")).toBe("declined");
  });
});

describe("service worker status (SPEC 4)", () => {
  it("none without a registration", () => expect(swStatusOf(null, false)).toBe("none"));
  it("installing, active, and waiting only when another worker controls the page", () => {
    expect(swStatusOf({ installing: {} }, false)).toBe("installing");
    expect(swStatusOf({ active: {} }, true)).toBe("active");
    expect(swStatusOf({ active: {}, waiting: {} }, true)).toBe("waiting");
    expect(swStatusOf({ waiting: {} }, false)).toBe("active");
  });
});

describe("constants and labels (SPEC 2, 9)", () => {
  it("times", () => {
    expect(INSTALL_PROMPT_DELAY_MS).toBe(3000);
    expect(SW_UPDATE_INTERVAL_MS).toBe(300000);
    expect(WELCOME_TEST_DELAY_MS).toBe(2000);
  });
  it("install label by width (768 or less is mobile)", () => {
    expect(installLabel(390)).toBe("Add to Home Screen");
    expect(installLabel(768)).toBe("Add to Home Screen");
    expect(installLabel(769)).toBe("Install App");
  });
});

describe("what the service worker handles", () => {
  const o = "https://reelfind.example";
  const get = (path: string, mode = "no-cors") => ({ url: o + path, method: "GET", mode });
  it("never the API, the worker itself or other origins", () => {
    for (const p of ["/api/identify", "/api/user", "/api/history?page=1", "/api/notifications/status", "/sw.js"]) {
      expect(strategyFor(get(p), o), p).toBe("bypass");
      expect(strategyFor(get(p, "navigate"), o), p).toBe("bypass");
    }
    expect(strategyFor({ url: "https://cdn.example/x.js", method: "GET", mode: "cors" }, o)).toBe("bypass");
    expect(strategyFor({ url: o + "/api/identify", method: "POST", mode: "cors" }, o)).toBe("bypass");
    expect(strategyFor({ url: o + "/", method: "POST", mode: "navigate" }, o)).toBe("bypass");
  });
  it("pages network-first, bundles cache-first, icons and css refreshed", () => {
    expect(strategyFor(get("/history", "navigate"), o)).toBe("page");
    expect(strategyFor(get("/assets/dist/runtime-ABC.js"), o)).toBe("immutable");
    expect(strategyFor(get("/assets/icons/icon-192.png"), o)).toBe("static");
    expect(strategyFor(get("/manifest.webmanifest"), o)).toBe("static");
  });
  it("leaves media and range requests to the network", () => {
    expect(strategyFor(get("/assets/demo/big-buck-bunny.mp4"), o)).toBe("bypass");
    const ranged = { ...get("/assets/dist/x.js"), headers: new Headers({ Range: "bytes=0-" }) };
    expect(strategyFor(ranged, o)).toBe("bypass");
  });
  it("movie data: same-origin assets or https images, never the API", () => {
    expect(cacheableDataUrl("/assets/dist/x.js", o)).toBe(true);
    expect(cacheableDataUrl("https://image.tmdb.org/t/p/w500/a.jpg", o)).toBe(true);
    expect(cacheableDataUrl("/api/identification/abc", o)).toBe(false);
    expect(cacheableDataUrl("http://insecure.example/a.jpg", o)).toBe(false);
  });
});

describe("push payloads and keys", () => {
  it("reads the server's JSON and keeps click targets on this site", () => {
    expect(parsePushPayload('{"title":"T","body":"B","url":"/history","tag":"x"}')).toEqual({
      title: "T",
      body: "B",
      url: "/history",
      tag: "x",
      icon: undefined,
    });
    expect(parsePushPayload('{"title":"T","url":"https://evil.example"}').url).toBe("/");
    expect(parsePushPayload('{"title":"T","url":"//evil.example"}').url).toBe("/");
    expect(parsePushPayload("plain words")).toEqual({ title: "Reelfind", body: "plain words", url: "/" });
    expect(parsePushPayload(null).title).toBe("Reelfind");
  });
  it("decodes base64url keys", () => {
    expect(Array.from(base64UrlToBytes("AQID_-8"))).toEqual([1, 2, 3, 255, 239]);
    expect(base64UrlToBytes("BLMbF9ffKBiWQLCKvTHb6LO8Nb6dcUh6TItC455vu2kElga6PQvUmaFyCdykxY2nOSSL3yKgfbmFLRTUaGv4yV8").length).toBe(65);
  });
});

describe("movie data kept offline", () => {
  it("poster first, then cast photos, no blanks or repeats, 8 at most", () => {
    const cast = Array.from({ length: 12 }, (_, i) => ({ name: `a${i}`, profileUrl: i === 3 ? null : `https://image.tmdb.org/p/${i}.jpg` }));
    const urls = movieImageUrls({ posterUrl: "https://image.tmdb.org/poster.jpg", cast: [...cast, cast[0]] });
    expect(urls[0]).toBe("https://image.tmdb.org/poster.jpg");
    expect(urls).toHaveLength(8);
    expect(urls).not.toContain(null);
    expect(movieImageUrls(null)).toEqual([]);
    expect(movieImageUrls({ poster: "/p.jpg" })).toEqual(["/p.jpg"]);
  });
});
