import { QueryClientProvider } from "@tanstack/react-query";
import { act, cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import type { ReactNode } from "react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { fetchSharedIdentification, SHARED_FAILED, SHARED_GONE } from "../src/identify/api";
import { ResultView } from "../src/identify/ResultView";
import type { IdentificationResult } from "../src/identify/result";
import Uploader from "../src/islands/Uploader";
import { createQueryClient } from "../src/lib/query";
import { resetToasts, getToasts } from "../src/lib/toast";

function wrap(ui: ReactNode) {
  const client = createQueryClient();
  return render(<QueryClientProvider client={client}>{ui}</QueryClientProvider>);
}

/** A fetch that answers by path; unknown paths 404. */
function routeFetch(routes: Record<string, () => Response>) {
  const fn = vi.fn(async (input: RequestInfo | URL, _init?: RequestInit) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    const path = new URL(url, "http://localhost").pathname;
    const make = routes[path];
    return make ? make() : new Response("not found", { status: 404 });
  });
  vi.stubGlobal("fetch", fn);
  return fn;
}
const json = (body: unknown, status = 200) => () => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

const full: IdentificationResult = {
  identificationId: "id-1",
  title: "The Matrix",
  year: "1999",
  runtime: "2h 16m",
  director: "Lana Wachowski",
  rating: "7.5/10",
  confidence: 0.934,
  genres: "Action, Science Fiction",
  description: "A hacker learns the truth.",
  posterUrl: "/poster.jpg",
  trailers: [{ key: "vKQi3bBA1y8", name: "Trailer" }],
  cast: Array.from({ length: 15 }, (_, i) => ({ name: `Actor ${i}`, character: `Role ${i}` })),
  language: "English",
  country: "USA",
  classification: "R",
  streamingPlatforms: { flatrate: [{ name: "Netflix" }], rent: [{ name: "Apple TV" }], buy: [], link: "https://example.test/watch" },
  funFacts: ["Fact one"],
  similarMovies: Array.from({ length: 14 }, (_, i) => ({ title: `Similar ${i}`, year: "2000" })),
  awards: [
    { name: "Best Visual Effects", result: "Won", organization: "Academy Awards", year: "2000" },
    { name: "Best Sound", result: "Nominated" },
    { name: "A", result: "Winner" },
    { name: "B", result: "Nominated" },
    { name: "C", result: "Nominated" },
    { name: "D", result: "Nominated" },
  ],
  boxOffice: { budget: "$63,000,000", worldwide: "$467,222,728" },
  timestamp: { from: 5020, at: 5025, to: 5030 },
};

// Rendering whole islands in jsdom is slow on a busy machine.
vi.setConfig({ testTimeout: 30_000 });

beforeEach(() => {
  resetToasts();
  localStorage.clear();
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe("ResultView", () => {
  it("shows the facts, stars with a half, match, genres and the Library timestamp", () => {
    routeFetch({ "/api/analytics/track": () => new Response(null, { status: 204 }) });
    wrap(<ResultView result={full} backLabel="Identify Another" onBack={() => {}} />);
    expect(screen.getByRole("heading", { level: 2, name: "The Matrix" })).toBe(document.activeElement);
    expect(screen.getByText("Dir. Lana Wachowski")).toBeDefined();
    expect(screen.getByText("Successfully Identified")).toBeDefined();
    const stars = screen.getByRole("img", { name: /Rated 7.5 out of 10/ });
    expect(stars.dataset.full).toBe("3");
    expect(stars.dataset.half).toBe("1");
    expect(screen.getByText("93% match")).toBeDefined();
    expect(screen.getByText("Science Fiction")).toBeDefined();
    expect(screen.getByText(/Found at 1:23:45/)).toBeDefined();
    expect(screen.getByRole("link", { name: /Watch Trailer/ }).getAttribute("href")).toBe("https://www.youtube.com/watch?v=vKQi3bBA1y8");
    expect(screen.getByRole("link", { name: /More streaming options/ }).getAttribute("href")).toBe("https://example.test/watch");
  });

  it("describes a long matched shot as a shot and lists the other titles the scene is in", () => {
    routeFetch({ "/api/analytics/track": () => new Response(null, { status: 204 }) });
    const shared: IdentificationResult = {
      ...full,
      type: "tv",
      title: "Show",
      season: 1,
      episode: 1,
      timestamp: { from: 0, at: 3.3, to: 4.96 },
      alsoIn: [
        { title: "Show", type: "tv", season: 1, episode: 2, timestamp: { from: 61, at: 62.5, to: 64 } },
        { title: "Show: The Movie", type: "movie", year: 2021, timestamp: { from: 10, at: 10, to: 10 } },
      ],
    };
    wrap(<ResultView result={shared} backLabel="Identify Another" onBack={() => {}} />);
    expect(screen.getByText(/Found at 0:03/).textContent).toContain("Found at 0:03 (in the shot from 0:00 to 0:04)");
    const also = screen.getByText(/The same scene is also in/);
    expect(also.textContent).toBe("The same scene is also in Show S01E02 at 1:02, Show: The Movie (2021) at 0:10.");
    cleanup();
    // A moment, not a shot: no range.
    wrap(<ResultView result={{ ...full, timestamp: { from: 12, at: 12.4, to: 12.9 } }} backLabel="Back" onBack={() => {}} />);
    expect(screen.getByText(/Found at 0:12/).textContent).not.toContain("shot");
    expect(screen.queryByText(/also in/)).toBeNull();
  });

  it("says a Library match's preview is unavailable rather than show a broken picture", () => {
    routeFetch({ "/api/analytics/track": () => new Response(null, { status: 204 }) });
    const library: IdentificationResult = { ...full, engine: "library", timestamp: { from: 2, at: 2.6, to: 3 } };
    wrap(<ResultView result={{ ...library, previewUrl: "/api/library/preview/t" }} backLabel="Back" onBack={() => {}} />);
    const img = screen.getByRole("img", { name: "Matched frame at 0:02" });
    expect(screen.queryByText("Preview unavailable")).toBeNull();
    fireEvent.error(img);
    expect(screen.getByText("Preview unavailable")).toBeDefined();
    expect(screen.queryByRole("img", { name: /Matched frame/ })).toBeNull();
    cleanup();
    // No link: the server that answered cannot read the video's file.
    wrap(<ResultView result={{ ...library, previewUrl: null }} backLabel="Back" onBack={() => {}} />);
    expect(screen.getByText("Preview unavailable")).toBeDefined();
    cleanup();
    // Not a Library answer: nothing said about a preview.
    wrap(<ResultView result={full} backLabel="Back" onBack={() => {}} />);
    expect(screen.queryByText("Preview unavailable")).toBeNull();
  });

  it("has an ARIA tablist: Overview first, arrows move, limits of 12 cast and 12 similar, 5 awards coloured", () => {
    routeFetch({ "/api/analytics/track": () => new Response(null, { status: 204 }) });
    wrap(<ResultView result={full} backLabel="Back" onBack={() => {}} />);
    const tabs = screen.getAllByRole("tab");
    expect(tabs.map((t) => t.textContent)).toEqual(["Overview", "Cast", "Trailer", "More Details"]);
    expect(tabs[0]!.getAttribute("aria-selected")).toBe("true");
    expect(screen.getByText("Plot Summary")).toBeDefined();
    fireEvent.keyDown(tabs[0]!, { key: "ArrowRight" });
    expect(screen.getByRole("tab", { name: "Cast" }).getAttribute("aria-selected")).toBe("true");
    expect(document.activeElement).toBe(screen.getByRole("tab", { name: "Cast" }));
    expect(screen.getAllByText(/^Actor \d+$/)).toHaveLength(12);
    fireEvent.keyDown(screen.getByRole("tab", { name: "Cast" }), { key: "ArrowRight" });
    const frame = document.querySelector("iframe")!;
    expect(frame.getAttribute("src")).toContain("https://www.youtube-nocookie.com/embed/vKQi3bBA1y8");
    expect(frame.getAttribute("title")).toContain("The Matrix");
    expect(screen.getByRole("link", { name: /Watch on YouTube/ })).toBeDefined();
    fireEvent.keyDown(screen.getByRole("tab", { name: "Trailer" }), { key: "End" });
    expect(screen.getAllByText(/^Similar \d+$/)).toHaveLength(12);
    const awards = document.querySelectorAll(".id-award");
    expect(awards).toHaveLength(5);
    expect(Array.from(awards).map((a) => (a as HTMLElement).dataset.tone)).toEqual(["won", "nominated", "won", "nominated", "nominated"]);
    fireEvent.keyDown(screen.getByRole("tab", { name: "More Details" }), { key: "ArrowRight" });
    expect(screen.getByRole("tab", { name: "Overview" }).getAttribute("aria-selected")).toBe("true");
  });

  it("hides Cast, Trailer and More Details without data, and replaces a broken poster", () => {
    wrap(<ResultView result={{ title: "Bare", posterUrl: "/x.jpg" }} backLabel="New Search" onBack={() => {}} />);
    expect(screen.getAllByRole("tab").map((t) => t.textContent)).toEqual(["Overview"]);
    expect(screen.getByText("70% match")).toBeDefined();
    const img = screen.getByRole("img", { name: "Bare poster" });
    fireEvent.error(img);
    expect(screen.getByRole("img", { name: "Bare poster (no poster)" })).toBeDefined();
  });

  it("Share copies the /shared link when there is no native share", async () => {
    const writeText = vi.fn(async () => {});
    Object.defineProperty(navigator, "clipboard", { value: { writeText }, configurable: true });
    wrap(<ResultView result={full} backLabel="Back" onBack={() => {}} />);
    fireEvent.click(screen.getByRole("button", { name: /^Share$/ }));
    await waitFor(() => expect(writeText).toHaveBeenCalledWith(`${location.origin}/shared/id-1`));
    expect(getToasts()[0]).toMatchObject({ title: "Link Copied", description: "Shareable link has been copied to your clipboard." });
    writeText.mockRejectedValueOnce(new Error("denied"));
    fireEvent.click(screen.getByRole("button", { name: /^Share$/ }));
    await waitFor(() => expect(getToasts()[0]).toMatchObject({ title: "Error", description: "Failed to copy link. Please try again." }));
  });

  it("uses the native share sheet when there is one: cancel is quiet, failure says Share Failed", async () => {
    const share = vi.fn(async (_data: ShareData) => {});
    Object.defineProperty(navigator, "share", { value: share, configurable: true });
    try {
      wrap(<ResultView result={full} backLabel="Back" onBack={() => {}} />);
      fireEvent.click(screen.getByRole("button", { name: /^Share$/ }));
      await waitFor(() => expect(share).toHaveBeenCalled());
      expect(share.mock.calls[0]![0].url).toBe(`${location.origin}/shared/id-1`);
      share.mockRejectedValueOnce(new DOMException("cancelled", "AbortError"));
      fireEvent.click(screen.getByRole("button", { name: /^Share$/ }));
      await waitFor(() => expect(share).toHaveBeenCalledTimes(2));
      expect(getToasts()).toHaveLength(0);
      share.mockRejectedValueOnce(new Error("boom"));
      fireEvent.click(screen.getByRole("button", { name: /^Share$/ }));
      await waitFor(() =>
        expect(getToasts()[0]).toMatchObject({
          title: "Share Failed",
          description: "Unable to share. Please try copying the link instead.",
          variant: "destructive",
        }),
      );
    } finally {
      delete (navigator as { share?: unknown }).share;
    }
  });

  it("Add to Collection: 401 says Sign in Required, other failures Error, success marks the button", async () => {
    routeFetch({ "/api/collections/items": () => new Response('{"message":"no"}', { status: 401 }) });
    wrap(<ResultView result={full} backLabel="Back" onBack={() => {}} />);
    fireEvent.click(screen.getByRole("button", { name: /Add to Collection/ }));
    await waitFor(() => expect(getToasts()[0]?.title).toBe("Sign in Required"));
    routeFetch({});
    fireEvent.click(screen.getByRole("button", { name: /Add to Collection/ }));
    await waitFor(() => expect(getToasts()[0]).toMatchObject({ title: "Error", description: "Failed to add to collection" }));
    expect(screen.queryByRole("button", { name: /In Your Collection/ })).toBeNull();
    routeFetch({ "/api/collections/items": () => new Response('{"id":1}', { status: 201, headers: { "content-type": "application/json" } }) });
    fireEvent.click(screen.getByRole("button", { name: /Add to Collection/ }));
    await waitFor(() => expect(getToasts()[0]?.title).toBe("Added to Collection"));
    expect(screen.getByRole("button", { name: /In Your Collection/ })).toBeDefined();
  });

  it("sends click_streaming_link with title and platform", async () => {
    const fetchMock = routeFetch({ "/api/analytics/track": () => new Response(null, { status: 204 }) });
    wrap(<ResultView result={full} backLabel="Back" onBack={() => {}} />);
    const panel = screen.getByRole("region", { name: "Where to Watch" });
    fireEvent.click(within(panel).getByRole("link", { name: /Netflix/ }));
    await waitFor(() => expect(fetchMock).toHaveBeenCalled());
    const call = fetchMock.mock.calls.find(([u]) => String(u).includes("/api/analytics/track"))!;
    const body = JSON.parse(String(call[1]?.body));
    expect(body).toMatchObject({ action: "click_streaming_link", resourceType: "identification", resourceId: "id-1" });
    expect(body.metadata).toMatchObject({ title: "The Matrix", platform: "Netflix" });
  });
});

describe("ResultView sharing for the owner", () => {
  it("offers Stop Sharing only to the owner, and Share turns the link back on", async () => {
    const fetchMock = routeFetch({ "/api/identification/id-1/sharing": json({ shared: false }) });
    wrap(<ResultView result={{ ...full, isOwner: true, shared: true }} backLabel="Back" onBack={() => {}} />);
    fireEvent.click(screen.getByRole("button", { name: "Stop Sharing" }));
    await waitFor(() => expect(getToasts()[0]?.title).toBe("Link turned off"));
    const call = fetchMock.mock.calls.find(([u]) => String(u).includes("/sharing"))!;
    expect(call[1]?.method).toBe("PUT");
    expect(JSON.parse(String(call[1]?.body))).toEqual({ shared: false });
    expect(screen.queryByRole("button", { name: "Stop Sharing" })).toBeNull();
    cleanup();
    wrap(<ResultView result={full} backLabel="Back" onBack={() => {}} />);
    expect(screen.queryByRole("button", { name: "Stop Sharing" })).toBeNull();
  });
});

describe("shared identifications (/?id=)", () => {
  it("maps 404, server messages and network failures to the SPEC texts", async () => {
    routeFetch({ "/api/identification/gone": json({ error: "not_found", message: "whatever" }, 404) });
    await expect(fetchSharedIdentification("gone")).rejects.toThrow(SHARED_GONE);
    routeFetch({ "/api/identification/bad": json({ message: "Identification id is malformed" }, 400) });
    await expect(fetchSharedIdentification("bad")).rejects.toThrow("Identification id is malformed");
    routeFetch({ "/api/identification/err": () => new Response("", { status: 502 }) });
    await expect(fetchSharedIdentification("err")).rejects.toThrow("Server error: 502");
    vi.stubGlobal("fetch", vi.fn(async () => Promise.reject(new TypeError("Failed to fetch"))));
    await expect(fetchSharedIdentification("x")).rejects.toThrow(SHARED_FAILED);
  });

  it("the uploader loads the shared result, then removes ?id= from the address bar", async () => {
    history.replaceState(null, "", "/?id=id-1&x=1");
    routeFetch({ "/api/identification/id-1": json(full), "/api/models": json({ available: { openai: true }, recommended: "openai" }) });
    wrap(<Uploader sharedId="id-1" maxFileSizeMb={10} allowedFileTypes={["png"]} />);
    expect(screen.getByText("Loading shared identification...")).toBeDefined();
    await screen.findByRole("heading", { name: "The Matrix" });
    expect(screen.getByRole("button", { name: /New Search/ })).toBeDefined();
    expect(location.search).toBe("?x=1");
  });

  it("a missing shared result shows the error view", async () => {
    history.replaceState(null, "", "/?id=nope");
    routeFetch({ "/api/identification/nope": json({ message: "gone" }, 404) });
    wrap(<Uploader sharedId="nope" />);
    const view = await screen.findByTestId("error-view");
    expect(view.querySelector(".id-error-message")?.textContent).toBe(SHARED_GONE);
    expect(within(view).getByRole("button", { name: "Upload Different File" })).toBeDefined();
    expect(location.search).toBe("");
  });
});

describe("Uploader", () => {
  it("preselects the default engine and says AI Models Updated when availability changes", async () => {
    let models = { available: { openai: true, anthropic: true, ensemble: true }, recommended: "anthropic" };
    routeFetch({
      "/api/models": () => json(models)(),
      "/api/settings": json({ ai_primary_model: "auto", openai_name: "GPT Vision" }),
    });
    const client = createQueryClient();
    render(
      <QueryClientProvider client={client}>
        <Uploader maxFileSizeMb={10} allowedFileTypes={["png"]} />
      </QueryClientProvider>,
    );
    const radio = (name: RegExp) => screen.getByRole("radio", { name }) as HTMLInputElement;
    await waitFor(() => expect(radio(/Anthropic/).checked).toBe(true));
    fireEvent.click(radio(/GPT Vision/));
    expect(radio(/GPT Vision/).checked).toBe(true);
    models = { available: { openai: false, anthropic: true, ensemble: false }, recommended: "anthropic" };
    await act(async () => {
      await client.invalidateQueries({ queryKey: ["/api/models"] });
    });
    await waitFor(() => expect(getToasts()[0]?.title).toBe("AI Models Updated"));
    expect(radio(/Anthropic/).checked).toBe(true);
    expect(screen.queryByRole("radio", { name: /GPT Vision/ })).toBeNull();
    expect(screen.getByText(/Not configured on this server: .*GPT Vision/)).toBeDefined();
  });

  it("validates the picked file with the settings' rules", async () => {
    routeFetch({ "/api/settings": json({ max_file_size: "1", allowed_file_types: "png,jpg" }), "/api/models": json({ available: {}, recommended: "auto" }) });
    wrap(<Uploader />);
    await waitFor(() => expect(screen.getByText(/PNG, JPG up to 1MB/)).toBeDefined());
    const input = document.querySelector<HTMLInputElement>('input[type="file"]')!;
    fireEvent.change(input, { target: { files: [new File(["x"], "clip.gif", { type: "image/gif" })] } });
    expect(screen.getByRole("alert").textContent).toContain('File type "gif" not supported. Please upload one of these formats: png, jpg.');
    const big = new File([new Uint8Array(1024 * 1024 + 1)], "big.png", { type: "image/png" });
    fireEvent.change(input, { target: { files: [big] } });
    expect(screen.getByRole("alert").textContent).toContain("File too large. Maximum allowed size is 1MB.");
    fireEvent.change(input, { target: { files: [new File(["x"], "ok.png", { type: "image/png" })] } });
    expect(screen.queryByRole("alert")).toBeNull();
    expect(screen.getByText("ok.png")).toBeDefined();
    expect(screen.queryByRole("checkbox")).toBeNull(); // audio only for video
    fireEvent.click(screen.getByRole("button", { name: "Change File" }));
    expect(screen.queryByText("ok.png")).toBeNull();
  });

  it("offers audio analysis for video, on by default", async () => {
    routeFetch({ "/api/models": json({ available: { openai: true }, recommended: "openai" }) });
    wrap(<Uploader maxFileSizeMb={10} allowedFileTypes={["mp4"]} />);
    const input = document.querySelector<HTMLInputElement>('input[type="file"]')!;
    fireEvent.change(input, { target: { files: [new File(["x"], "clip.mp4", { type: "video/mp4" })] } });
    const box = screen.getByRole("checkbox", { name: /Analyze audio/ }) as HTMLInputElement;
    expect(box.checked).toBe(true);
    expect(screen.getByRole("img", { name: "Video file clip.mp4" })).toBeDefined();
  });

  it("a guest who used the free identification gets the Authentication Required dialog, not an upload", async () => {
    const fetchMock = routeFetch({ "/api/models": json({ available: { openai: true }, recommended: "openai" }) });
    localStorage.setItem("freeUsageCount", "1");
    const open = vi.fn();
    XMLHttpRequest.prototype.open = open;
    wrap(<Uploader maxFileSizeMb={10} allowedFileTypes={["png"]} />);
    fireEvent.change(document.querySelector('input[type="file"]')!, { target: { files: [new File(["x"], "a.png", { type: "image/png" })] } });
    await act(async () => {
      fireEvent.click(screen.getByRole("button", { name: /Identify Now/ }));
    });
    expect(screen.getByText("Authentication Required")).toBeDefined();
    expect(screen.getByText(/First trial complete!/)).toBeDefined();
    expect(screen.getByRole("link", { name: "Continue with Account" }).getAttribute("href")).toBe("/auth");
    expect(open).not.toHaveBeenCalled();
    expect(fetchMock.mock.calls.some(([u]) => String(u).includes("/api/identify"))).toBe(false);
  });
});

describe("ErrorView after a busy or rate-limited answer", () => {
  afterEach(() => {
    vi.useRealTimers();
    cleanup();
  });

  it("Try Again counts down the wait the server asked for, then works", async () => {
    vi.useFakeTimers();
    const { ErrorView } = await import("../src/identify/ErrorView");
    const { describeFailure } = await import("../src/identify/errors");
    const { ApiError } = await import("../src/lib/api");
    const failure = describeFailure(new ApiError(503, "Service Unavailable", JSON.stringify({ message: "Busy", retryAfter: 3 })));
    const onRetry = vi.fn();
    render(<ErrorView failure={failure} onRetry={onRetry} onReset={() => {}} />);
    const button = screen.getByRole("button", { name: "Try Again in 3 s" });
    expect(button).toHaveProperty("disabled", true);
    expect(screen.getByText("The server asked to wait 3 seconds before the next try.")).toBeTruthy();
    await act(async () => {
      vi.advanceTimersByTime(1000);
    });
    expect(screen.getByRole("button", { name: "Try Again in 2 s" })).toBeTruthy();
    await act(async () => {
      vi.advanceTimersByTime(2000);
    });
    const ready = screen.getByRole("button", { name: "Try Again" });
    expect(ready).toHaveProperty("disabled", false);
    fireEvent.click(ready);
    expect(onRetry).toHaveBeenCalledOnce();
  });
});
