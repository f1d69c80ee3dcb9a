import { QueryClientProvider } from "@tanstack/react-query";
import { act, cleanup, fireEvent, render, screen } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { uploadIdentify } from "../src/identify/api";
import { IdentifyNetworkError, IdentifyTimeoutError } from "../src/identify/errors";
import { reviewProblem, REVIEW_TEXTS } from "../src/identify/ReviewDialog";
import Uploader, { STEPS } from "../src/islands/Uploader";
import { ApiError } from "../src/lib/api";
import { createQueryClient } from "../src/lib/query";

/** A stand-in XMLHttpRequest the test drives by hand. */
class FakeXhr {
  static last: FakeXhr | null = null;
  method = "";
  url = "";
  headers: Record<string, string> = {};
  body: FormData | null = null;
  status = 0;
  statusText = "";
  responseText = "";
  timeout = 0;
  withCredentials = false;
  aborted = false;
  upload: { onprogress: ((e: { lengthComputable: boolean; loaded: number; total: number }) => void) | null; onload: (() => void) | null } = {
    onprogress: null,
    onload: null,
  };
  onload: (() => void) | null = null;
  onerror: (() => void) | null = null;
  ontimeout: (() => void) | null = null;
  onabort: (() => void) | null = null;
  constructor() {
    FakeXhr.last = this;
  }
  open(method: string, url: string) {
    this.method = method;
    this.url = url;
  }
  setRequestHeader(k: string, v: string) {
    this.headers[k] = v;
  }
  send(body: FormData) {
    this.body = body;
  }
  abort() {
    this.aborted = true;
    this.onabort?.();
  }
  respond(status: number, body: unknown) {
    this.status = status;
    this.responseText = typeof body === "string" ? body : JSON.stringify(body);
    this.onload?.();
  }
}

vi.setConfig({ testTimeout: 30_000 });

beforeEach(() => {
  FakeXhr.last = null;
  vi.stubGlobal("XMLHttpRequest", FakeXhr);
  localStorage.clear();
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  vi.useRealTimers();
});

const png = () => new File([new Uint8Array(10)], "scene.png", { type: "image/png" });

describe("uploadIdentify (POST /api/identify over XMLHttpRequest)", () => {
  it("sends the four multipart fields with credentials and reports progress", async () => {
    const progress = vi.fn();
    const uploaded = vi.fn();
    const p = uploadIdentify({ file: png(), mode: "openai", useAudioAnalysis: false, timeoutMs: 120_000, onProgress: progress, onUploaded: uploaded });
    const xhr = FakeXhr.last!;
    expect([xhr.method, xhr.url, xhr.withCredentials, xhr.timeout]).toEqual(["POST", "/api/identify", true, 120_000]);
    expect((xhr.body!.get("file") as File).name).toBe("scene.png");
    expect(xhr.body!.get("mode")).toBe("openai");
    expect(xhr.body!.get("useAudioAnalysis")).toBe("false");
    expect(xhr.body!.get("useEnhancedAnalysis")).toBe("true");
    xhr.upload.onprogress!({ lengthComputable: true, loaded: 5, total: 10 });
    xhr.upload.onload!();
    expect(progress).toHaveBeenCalledWith(5, 10);
    expect(uploaded).toHaveBeenCalled();
    xhr.respond(200, { success: true, data: { title: "Heat" } });
    expect((await p).title).toBe("Heat");
  });

  it("turns failures into ApiError, timeout, network and abort errors", async () => {
    const go = () => uploadIdentify({ file: png(), mode: "auto", useAudioAnalysis: true, timeoutMs: 240_000 });
    let p = go();
    FakeXhr.last!.respond(422, { message: "bad" });
    const e = await p.catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ApiError);
    expect((e as ApiError).message).toBe('422: {"message":"bad"}');
    p = go();
    FakeXhr.last!.ontimeout!();
    await expect(p).rejects.toBeInstanceOf(IdentifyTimeoutError);
    p = go();
    FakeXhr.last!.onerror!();
    await expect(p).rejects.toBeInstanceOf(IdentifyNetworkError);
    const ctrl = new AbortController();
    p = uploadIdentify({ file: png(), mode: "auto", useAudioAnalysis: false, timeoutMs: 1, signal: ctrl.signal });
    ctrl.abort();
    await expect(p).rejects.toMatchObject({ name: "AbortError" });
    expect(FakeXhr.last!.aborted).toBe(true);
  });
});

describe("Uploader processing screen", () => {
  function renderUploader() {
    vi.stubGlobal("fetch", vi.fn(async () => new Response(JSON.stringify({ available: { openai: true }, recommended: "openai" }))));
    const client = createQueryClient();
    render(
      <QueryClientProvider client={client}>
        <Uploader maxFileSizeMb={10} allowedFileTypes={["png"]} signedIn />
      </QueryClientProvider>,
    );
    fireEvent.change(document.querySelector('input[type="file"]')!, { target: { files: [png()] } });
  }

  it("moves through the three steps at 2 s and 5 s, and Cancel returns to the selected file", async () => {
    vi.useFakeTimers();
    renderUploader();
    await act(async () => {
      fireEvent.click(screen.getByRole("button", { name: /Identify Now/ }));
    });
    expect(screen.getByRole("heading", { name: "Identifying Your Scene" })).toBeDefined();
    expect(screen.getByText("Expected time: 30-60s")).toBeDefined();
    expect((screen.getByRole("button", { name: "Analyzing..." }) as HTMLButtonElement).disabled).toBe(true);
    const current = () => document.querySelector('[aria-current="step"]')?.textContent;
    expect(current()).toContain(STEPS[0].label);
    await act(async () => vi.advanceTimersByTime(2000));
    expect(current()).toContain("Finding matches");
    await act(async () => vi.advanceTimersByTime(3000));
    expect(current()).toContain("Finalizing results");
    await act(async () => {
      fireEvent.click(screen.getByRole("button", { name: "Cancel" }));
    });
    expect(FakeXhr.last!.aborted).toBe(true);
    expect(screen.getByText("scene.png")).toBeDefined();
    expect(screen.getByRole("button", { name: /Identify Now/ })).toBeDefined();
  });

  it("a signed-in success shows the result and does not count a free use", async () => {
    renderUploader();
    await act(async () => {
      fireEvent.click(screen.getByRole("button", { name: /Identify Now/ }));
    });
    await act(async () => FakeXhr.last!.respond(200, { identificationId: "r1", title: "Heat", confidence: 0.8 }));
    expect(await screen.findByRole("heading", { name: "Heat" })).toBeDefined();
    expect(screen.getByText("80% match")).toBeDefined();
    expect(localStorage.getItem("freeUsageCount")).toBeNull();
  });

  it("a 403 requiresAuth opens the Authentication Required dialog", async () => {
    renderUploader();
    await act(async () => {
      fireEvent.click(screen.getByRole("button", { name: /Identify Now/ }));
    });
    await act(async () => FakeXhr.last!.respond(403, { error: "forbidden", message: "First trial complete!", requiresAuth: true }));
    expect(screen.getByText("Authentication Required")).toBeDefined();
    expect(screen.getByRole("link", { name: "Continue with Account" }).getAttribute("href")).toBe("/auth");
  });
});

describe("review validation (SPEC section 5)", () => {
  it("requires text, then a signed-in user", () => {
    expect(reviewProblem("   ", true)).toEqual({ title: "Review required", description: "Please write a review before submitting" });
    expect(reviewProblem("Great", false)).toEqual({ title: "Sign in required", description: "Please sign in to submit a review" });
    expect(reviewProblem("Great", true)).toBeNull();
    expect(REVIEW_TEXTS.thanks).toBe("Thank you for your review!");
  });
});
