import { describe, expect, it } from "vitest";
import { ApiError } from "../src/lib/api";
import { availabilityKey, defaultEngine, engineDescription, engineName, engineOptions, stillAvailable } from "../src/identify/engines";
import { describeFailure, IdentifyNetworkError, IdentifyTimeoutError, MSG } from "../src/identify/errors";
import {
  awardTone,
  confidenceOf,
  formatClock,
  genreList,
  hasMoreDetails,
  matchPercent,
  parseRating,
  platformInfo,
  platformKey,
  ratingStars,
  trailerKey,
  unwrapResult,
} from "../src/identify/result";
import {
  acceptAttribute,
  expectedTime,
  extensionOf,
  isVideoFile,
  MSG_FALLBACK_TOO_LARGE,
  MSG_NOT_MEDIA,
  rulesFromSettings,
  timeoutMs,
  validateFile,
} from "../src/identify/validate";

const MB = 1024 * 1024;
const file = (name: string, type: string, size: number) => ({ name, type, size });

describe("upload validation (SPEC section 5)", () => {
  const rules = rulesFromSettings({ max_file_size: "10", allowed_file_types: "jpg,jpeg,png,webp,mp4,mov" });

  it("reads the rules from the settings, with defaults for missing values", () => {
    expect(rules).toEqual({ maxMb: 10, allowed: ["jpg", "jpeg", "png", "webp", "mp4", "mov"] });
    expect(rulesFromSettings({})).toEqual({ maxMb: 10, allowed: ["jpg", "jpeg", "png", "webp", "mp4", "mov"] });
    expect(rulesFromSettings({ max_file_size: "50", allowed_file_types: " .PNG , gif" })).toEqual({ maxMb: 50, allowed: ["png", "gif"] });
    expect(rulesFromSettings(undefined)).toBeNull();
  });

  it("settings loaded: size above max_file_size", () => {
    expect(validateFile(file("a.png", "image/png", 10 * MB + 1), rules)).toBe("File too large. Maximum allowed size is 10MB.");
    expect(validateFile(file("a.png", "image/png", 10 * MB), rules)).toBeNull();
  });

  it("settings loaded: extension not in allowed_file_types", () => {
    expect(validateFile(file("clip.avi", "video/x-msvideo", 1000), rules)).toBe(
      'File type "avi" not supported. Please upload one of these formats: jpg, jpeg, png, webp, mp4, mov.',
    );
    expect(validateFile(file("Shot.JPG", "image/jpeg", 1000), rules)).toBeNull();
    expect(validateFile(file("noext", "image/jpeg", 1000), rules)).toMatch(/^File type "noext" not supported/);
  });

  it("settings not loaded: image or video, at most 25MB", () => {
    expect(validateFile(file("notes.txt", "text/plain", 10), null)).toBe(MSG_NOT_MEDIA);
    expect(MSG_NOT_MEDIA).toBe("Please upload an image or video file");
    expect(validateFile(file("a.mov", "video/quicktime", 25 * MB + 1), null)).toBe(MSG_FALLBACK_TOO_LARGE);
    expect(MSG_FALLBACK_TOO_LARGE).toBe(
      "File size too large (over 25MB). Try compressing your file or choose a smaller image/video.",
    );
    expect(validateFile(file("a.gif", "image/gif", 25 * MB), null)).toBeNull();
  });

  it("knows video files, extensions, accept lists, timeouts and expected times", () => {
    expect(isVideoFile(file("a.mp4", "video/mp4", 1))).toBe(true);
    expect(isVideoFile(file("a.mkv", "", 1))).toBe(true);
    expect(isVideoFile(file("a.png", "image/png", 1))).toBe(false);
    expect(extensionOf("archive.tar.gz")).toBe("gz");
    expect(extensionOf(".hidden")).toBe("");
    expect(acceptAttribute(rules)).toBe(".jpg,.jpeg,.png,.webp,.mp4,.mov");
    expect(acceptAttribute(null)).toBe("image/*,video/*");
    expect(timeoutMs(false, true)).toBe(120_000);
    expect(timeoutMs(true, false)).toBe(120_000);
    expect(timeoutMs(true, true)).toBe(240_000);
    expect(expectedTime(false, false)).toBe("30-60s");
    expect(expectedTime(true, false)).toBe("1-2 min");
    expect(expectedTime(true, true)).toBe("2-4 min");
  });
});

describe("identify errors: messages and error view (SPEC section 8)", () => {
  const api = (status: number, body: unknown, statusText = "") =>
    new ApiError(status, statusText, typeof body === "string" ? body : JSON.stringify(body));

  it.each([
    [api(413, { error: "payload_too_large", message: "File too large. Maximum allowed size is 10MB." }), "File Too Large", MSG.tooLarge(10)],
    [api(422, { message: "The file is not a picture or a video we can read." }), "File Format Issue", MSG.invalidFormat],
    [api(408, ""), "Upload Timed Out", MSG.timedOut],
    [api(504, "<html>gateway</html>"), "Upload Timed Out", MSG.timedOut],
    [api(429, { message: "slow down" }), "Identification Failed", MSG.tooMany],
    [api(500, "boom"), "Identification Failed", MSG.unavailable],
    [new IdentifyTimeoutError(120), "Upload Timed Out", `${MSG.timedOut} (The identification timed out after 120 seconds.)`],
    [new IdentifyNetworkError(), "Connection Issue", MSG.network],
    [api(400, { message: "Unknown AI engine \"x\"." }), "Identification Failed", 'Unknown AI engine "x".'],
    [api(400, ""), "Identification Failed", MSG.generic],
  ])("%s -> %s", (error, title, message) => {
    const f = describeFailure(error, 10);
    expect(f.title).toBe(title);
    expect(f.message.startsWith(message)).toBe(true);
    expect(f.message.length).toBeGreaterThan(message.length); // the hint suffix
    expect(f.requiresAuth).toBe(false);
    expect(f.advice.length).toBeGreaterThan(0);
  });

  it("names one size limit on the File Too Large view: the server's, else the page's", () => {
    const numbers = (f: ReturnType<typeof describeFailure>) =>
      new Set([f.base, ...f.advice].flatMap((t) => Array.from(t.matchAll(/(\d+)\s*MB/g), (m) => m[1])));
    // The server refused at 40MB (an admin raised the limit after this page loaded at 10).
    const server = describeFailure(api(413, { code: "file_too_large", message: "File too large. Maximum allowed size is 40MB." }), 10);
    expect(server.title).toBe("File Too Large");
    expect([...numbers(server)]).toEqual(["40"]);
    // A proxy's 413 names no limit: the page's own.
    const proxy = describeFailure(api(413, "<html>413 Request Entity Too Large</html>"), 10);
    expect([...numbers(proxy)]).toEqual(["10"]);
    // Nothing known: the SPEC fallback, 25MB, in the message and the advice alike.
    expect([...numbers(describeFailure(api(413, "")))]).toEqual(["25"]);
  });

  it("keeps the raw error for the technical details", () => {
    const f = describeFailure(api(422, { error: "unsupported_media", message: "bad" }));
    expect(f.raw).toBe('422: {"error":"unsupported_media","message":"bad"}');
  });

  it("a 503 without engines names what the operator must set, to an administrator only", () => {
    const noEngine = api(503, { code: "engine_unavailable", message: "No identification engine is configured. Set OPENAI_API_KEY." });
    const visitor = describeFailure(noEngine);
    expect(visitor.message).toContain(MSG.unavailable);
    expect(visitor.message).not.toContain("OPENAI_API_KEY");
    document.body.innerHTML = '<header data-header data-user-id="1" data-user-admin></header>';
    try {
      expect(describeFailure(noEngine).message).toContain("OPENAI_API_KEY");
    } finally {
      document.body.innerHTML = "";
    }
    // Other 503s say why to everyone.
    expect(describeFailure(api(503, { code: "server_busy", message: "Busy, try in a minute." })).message).toContain("Busy, try in a minute.");
  });

  it("a 429 or 503 keeps the wait the server asked for, bounded", () => {
    expect(describeFailure(api(429, { message: "Slow down", retryAfter: 42 })).retryAfter).toBe(42);
    expect(describeFailure(api(503, { message: "Busy", retryAfter: 2.2 })).retryAfter).toBe(3);
    expect(describeFailure(api(503, { message: "Busy", retryAfter: 99999 })).retryAfter).toBe(3600);
    expect(describeFailure(api(429, { message: "Slow down", retryAfter: "soon" })).retryAfter).toBe(0);
    expect(describeFailure(api(400, { message: "Bad", retryAfter: 5 })).retryAfter).toBe(0);
  });

  it("a 403 with requiresAuth is the guest limit, not an error view", () => {
    expect(describeFailure(api(403, { requiresAuth: true, message: "Sign in" })).requiresAuth).toBe(true);
    expect(describeFailure(api(403, { message: "Forbidden" })).requiresAuth).toBe(false);
  });

  it("the server's error code decides the view when it says the kind", () => {
    // An interrupted upload is a connection problem, whatever its text says.
    const interrupted = describeFailure(
      api(400, { error: "Bad Request", code: "upload_interrupted", message: "The upload could not be read (body error). Please try again." }),
    );
    expect(interrupted.kind).toBe("network");
    expect(interrupted.title).toBe("Connection Issue");
    expect(interrupted.message.startsWith("The upload could not be read")).toBe(true);
    // A code that leaves the kind open: the message shown decides, as before.
    const unknownEngine = describeFailure(api(400, { code: "unknown_engine", message: 'Unknown AI engine "x".' }));
    expect(unknownEngine.kind).toBe("other");
    expect(describeFailure(api(422, { code: "validation_failed", message: "Fetching the url took too long." })).kind).toBe("format");
  });

  it("an abort by the deadline reads as a timeout", () => {
    expect(describeFailure(new DOMException("x", "TimeoutError")).title).toBe("Upload Timed Out");
  });
});

describe("result rules (SPEC section 3, Result view, section 9)", () => {
  it("parses ratings: numbers, '7.5/10', junk", () => {
    expect(parseRating(8.2)).toBe(8.2);
    expect(parseRating("7.5/10")).toBe(7.5);
    expect(parseRating(" 6 / 10")).toBe(6);
    expect(parseRating("N/A")).toBeNull();
    expect(parseRating("")).toBeNull();
    expect(parseRating(null)).toBeNull();
    expect(parseRating(Number.NaN)).toBeNull();
  });

  it("gives stars out of 5 with halves", () => {
    expect(ratingStars(10)).toMatchObject({ full: 5, half: false, empty: 0 });
    expect(ratingStars("7.5/10")).toMatchObject({ full: 3, half: true, empty: 1, value: 3.75 });
    expect(ratingStars(7)).toMatchObject({ full: 3, half: true, empty: 1 });
    expect(ratingStars(6.9)).toMatchObject({ full: 3, half: false, empty: 2 });
    expect(ratingStars(8.2)).toMatchObject({ full: 4, half: false, empty: 1 });
    expect(ratingStars(9)).toMatchObject({ full: 4, half: true, empty: 0 });
    expect(ratingStars(0)).toMatchObject({ full: 0, half: false, empty: 5 });
    expect(ratingStars(12)).toMatchObject({ full: 5, half: false, empty: 0 });
    expect(ratingStars("unknown")).toBeNull();
  });

  it("match percentage is round(confidence * 100), default confidence 0.7", () => {
    expect(matchPercent({ confidence: 0.934 })).toBe(93);
    expect(matchPercent({ confidence: 0.935 })).toBe(94);
    expect(matchPercent({ confidenceScore: 0.5 })).toBe(50);
    expect(matchPercent({ confidence: null, confidenceScore: null })).toBe(70);
    expect(matchPercent({})).toBe(70);
    expect(confidenceOf({ confidence: 0, confidenceScore: 0.9 })).toBe(0);
  });

  it("award colours: won or winner is green, anything else blue", () => {
    expect(awardTone("Won")).toBe("won");
    expect(awardTone("Winner")).toBe("won");
    expect(awardTone("winner of 3")).toBe("won");
    expect(awardTone("Nominated")).toBe("nominated");
    expect(awardTone("Wonderful")).toBe("nominated");
    expect(awardTone(undefined)).toBe("nominated");
  });

  it("genres from an array or a comma string", () => {
    expect(genreList(["Drama", " Crime "])).toEqual(["Drama", "Crime"]);
    expect(genreList("Action, Sci-Fi,,")).toEqual(["Action", "Sci-Fi"]);
    expect(genreList(null)).toEqual([]);
  });

  it("knows the platform keys, names and colours", () => {
    expect(platformKey("Netflix")).toBe("netflix");
    expect(platformKey("Amazon Prime Video")).toBe("amazon_prime");
    expect(platformKey("Disney Plus")).toBe("disney_plus");
    expect(platformKey("Apple TV+")).toBe("apple_tv");
    expect(platformKey("YouTube Premium")).toBe("youtube");
    expect(platformKey("Mubi")).toBeNull();
    expect(platformInfo("Netflix")).toMatchObject({ key: "netflix", color: "#E50914", letter: "N" });
    expect(platformInfo("Mubi")).toMatchObject({ key: "other", name: "Mubi", letter: "M" });
  });

  it("finds the trailer key and unwraps {success, data}", () => {
    expect(trailerKey({ trailers: [{ key: "abc123" }] })).toBe("abc123");
    expect(trailerKey({ trailerUrl: "https://www.youtube.com/watch?v=vKQi3bBA1y8" })).toBe("vKQi3bBA1y8");
    expect(trailerKey({ trailerUrl: "https://youtu.be/vKQi3bBA1y8" })).toBe("vKQi3bBA1y8");
    expect(trailerKey({})).toBeNull();
    expect(unwrapResult({ success: true, data: { title: "Heat" } }).title).toBe("Heat");
    expect(unwrapResult({ title: "Heat", data: {} }).title).toBe("Heat");
    expect(formatClock(5025)).toBe("1:23:45");
    expect(formatClock(65)).toBe("1:05");
    expect(hasMoreDetails({ boxOffice: { budget: null } })).toBe(false);
    expect(hasMoreDetails({ awards: [{ name: "x" }] })).toBe(true);
  });
});

describe("engine choice (SPEC section 4)", () => {
  const models = { available: { google: true, openai: true, xai: false, anthropic: false, ensemble: true }, recommended: "google" };

  it("admin primary model first, then the user's default, then recommended", () => {
    expect(defaultEngine(models, "openai", "google")).toBe("openai");
    expect(defaultEngine(models, "xai", "openai")).toBe("openai");
    expect(defaultEngine(models, "auto", "ensemble")).toBe("ensemble");
    expect(defaultEngine(models, "auto", "auto")).toBe("google");
    expect(defaultEngine(models, null, "anthropic")).toBe("google");
    expect(defaultEngine({ available: {}, recommended: "auto" }, "openai", "google")).toBe("auto");
  });

  it("lists Auto and the engines with settings' names, marking unavailable ones", () => {
    const opts = engineOptions(models, { openai_name: "GPT Vision", openai_desc: "Sees well", auto_desc: "Best pick" });
    expect(opts.map((o) => o.id)).toEqual(["auto", "google", "openai", "xai", "anthropic", "ensemble"]);
    expect(opts[0]).toMatchObject({ description: "Best pick", available: true });
    expect(opts.find((o) => o.id === "openai")).toMatchObject({ name: "GPT Vision", description: "Sees well", available: true });
    expect(opts.find((o) => o.id === "xai")?.available).toBe(false);
    expect(engineOptions({ ...models, available: { ...models.available, library: true } }, {}).some((o) => o.id === "library")).toBe(true);
  });

  it("names an engine id as the settings do, whatever its case", () => {
    const settings = { openai_name: "GPT Vision", library_desc: "Your own videos" };
    expect(engineName("openai", settings)).toBe("GPT Vision");
    expect(engineName("OpenAI", settings)).toBe("GPT Vision");
    expect(engineName("anthropic", settings)).toBe("Anthropic Claude");
    expect(engineName("anthropic", undefined)).toBe("Anthropic Claude");
    expect(engineName("someday-engine", settings)).toBe("someday-engine");
    expect(engineDescription("library", settings)).toBe("Your own videos");
    expect(engineDescription("xai", settings)).toBe("");
  });

  it("notices availability changes", () => {
    expect(availabilityKey(models)).toBe("ensemble,google,openai");
    expect(stillAvailable("xai", models)).toBe(false);
    expect(stillAvailable("auto", models)).toBe(true);
    expect(stillAvailable("auto", { available: {}, recommended: "auto" })).toBe(false);
  });
});

describe("the notice about missing details: neutral for visitors, the set-up for admins", () => {
  it("says nothing of the server's keys to a visitor, and names them to an admin", async () => {
    const { detailsNotice, NOTICE_NO_CATALOG, ADMIN_HINT_NO_CATALOG } = await import("../src/identify/result");
    const r = { title: "Heat", detailsUnavailable: true, notice: NOTICE_NO_CATALOG, detailsReason: "noCatalogKey" as const };
    expect(detailsNotice(r, false)).toEqual({ text: NOTICE_NO_CATALOG, adminHint: null });
    expect(detailsNotice(r, true)).toEqual({ text: NOTICE_NO_CATALOG, adminHint: ADMIN_HINT_NO_CATALOG });
    // A result stored before detailsReason existed.
    const legacy = {
      title: "Heat",
      detailsUnavailable: true,
      notice: "Movie details are unavailable: the server has no TMDB key (TMDB_API_KEY or TMDB_READ_TOKEN). Showing what the AI engine recognised.",
    };
    expect(detailsNotice(legacy, false)?.text).not.toMatch(/TMDB/);
    expect(detailsNotice(legacy, true)?.adminHint).toBe(ADMIN_HINT_NO_CATALOG);
    // Other reasons are no set-up: the same words for everyone.
    const missing = { title: "Heat", detailsUnavailable: true, notice: "Not found.", detailsReason: "notFound" as const };
    expect(detailsNotice(missing, true)).toEqual({ text: "Not found.", adminHint: null });
    expect(detailsNotice({ title: "Heat", detailsUnavailable: false, notice: "x" }, true)).toBeNull();
  });
});
