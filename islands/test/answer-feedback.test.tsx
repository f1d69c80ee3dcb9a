import { act, cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { AnswerFeedback, MemoryNote } from "../src/identify/feedback/AnswerFeedback";
import { feedbackError } from "../src/identify/feedback/feedback";
import { ApiError } from "../src/lib/api";
import type { IdentificationResult } from "../src/identify/result";
import { json, routeFetch } from "./route-fetch";

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  vi.useRealTimers();
});

const mine: IdentificationResult = { identificationId: "abc", title: "The Matrix", year: "1999", isOwner: true, shared: true };

describe("Was this right?", () => {
  it("is asked of the owner only", () => {
    const { container } = render(<AnswerFeedback result={{ ...mine, isOwner: false }} />);
    expect(container.textContent).toBe("");
    render(<AnswerFeedback result={mine} />);
    expect(screen.getByRole("heading", { name: "Was this right?" })).toBeTruthy();
  });

  it("Yes confirms", async () => {
    const fetch = routeFetch({ "POST /api/identification/abc/feedback": json({ verdict: "right", result: mine }) });
    render(<AnswerFeedback result={mine} />);
    fireEvent.click(screen.getByRole("button", { name: "Yes" }));
    await screen.findByText("Thanks for confirming.");
    expect(JSON.parse(String(fetch.mock.calls[0]![1]!.body))).toEqual({ verdict: "right" });
  });

  it("No searches the catalog; Enter picks the highlighted title and the result follows", async () => {
    const picked = { ...mine, title: "Heat", year: "1995", correction: { by: "you", previousTitle: "The Matrix" } };
    const fetch = routeFetch({
      "GET /api/titles/search": json([
        { tmdbId: 949, type: "movie", title: "Heat", year: "1995", posterUrl: null },
        { tmdbId: 7, type: "tv", title: "Heat Wave", year: null, posterUrl: null },
      ]),
      "POST /api/identification/abc/feedback": json({ verdict: "wrong", result: picked, memoryChangedTo: null }),
    });
    const onCorrected = vi.fn();
    const changed = vi.fn();
    window.addEventListener("reelfind:history-changed", changed);
    render(<AnswerFeedback result={mine} onCorrected={onCorrected} />);
    fireEvent.click(screen.getByRole("button", { name: "No" }));
    const box = screen.getByRole("combobox", { name: "Which title is it?" });
    expect(document.activeElement).toBe(box);
    fireEvent.change(box, { target: { value: "heat" } });
    const options = await screen.findAllByRole("option");
    expect(options.map((o) => o.textContent)).toEqual(["Heat1995 · Movie", "Heat WaveYear unknown · TV show"]);
    expect(options[0]!.getAttribute("aria-selected")).toBe("true");
    fireEvent.keyDown(box, { key: "ArrowDown" });
    expect(screen.getAllByRole("option")[1]!.getAttribute("aria-selected")).toBe("true");
    fireEvent.keyDown(box, { key: "ArrowDown" });
    expect(screen.getAllByRole("option")[0]!.getAttribute("aria-selected")).toBe("true");
    fireEvent.keyDown(box, { key: "Enter" });
    await screen.findByText("Thanks. Your result now shows Heat (1995).");
    const sent = fetch.mock.calls.find((c) => String(c[0]).includes("/feedback"))!;
    expect(JSON.parse(String(sent[1]!.body))).toEqual({ verdict: "wrong", tmdbId: 949, type: "movie" });
    expect(onCorrected).toHaveBeenCalledWith(expect.objectContaining({ title: "Heat", isOwner: true, feedback: "wrong" }));
    expect(changed).toHaveBeenCalled();
  });

  it("I don't know sends wrong without a title; an answer given shows what was said", async () => {
    const fetch = routeFetch({ "POST /api/identification/abc/feedback": json({ verdict: "wrong", result: mine }) });
    const { unmount } = render(<AnswerFeedback result={mine} />);
    fireEvent.click(screen.getByRole("button", { name: "No" }));
    await act(async () => fireEvent.click(screen.getByRole("button", { name: "I don't know" })));
    await waitFor(() => expect(fetch).toHaveBeenCalled());
    expect(JSON.parse(String(fetch.mock.calls[0]![1]!.body))).toEqual({ verdict: "wrong" });
    unmount();
    render(<AnswerFeedback result={{ ...mine, feedback: "right" }} />);
    expect(screen.getByText("You said this was right.")).toBeTruthy();
  });

  it("says where an answer came from", () => {
    render(<MemoryNote result={{ ...mine, fromMemory: { confirmations: 3, engine: "openai" } }} />);
    expect(screen.getByTestId("from-memory").textContent).toContain("Recognised from earlier identifications · confirmed by 3 people");
    cleanup();
    render(<MemoryNote result={{ ...mine, correction: { by: "people", previousTitle: "Heat" } }} />);
    expect(screen.getByTestId("corrected-note").textContent).toContain("it first said Heat");
  });

  it("explains refusals in words", () => {
    expect(feedbackError(new ApiError(409, "Conflict", "{}"), "vote")).toMatch(/already answered/);
    expect(feedbackError(new ApiError(429, "Too Many", ""), "search")).toMatch(/Too many/);
    expect(feedbackError(new ApiError(422, "Unprocessable", JSON.stringify({ error: "The movie database has no such title." })), "vote")).toBe(
      "The movie database has no such title.",
    );
    expect(feedbackError(new Error("boom"), "search")).toMatch(/search failed/);
  });
});

describe("savings in dollars", async () => {
  const { usd } = await import("../src/studio/InsightMemory");
  it("keeps the fractions of a cent a few calls save", () => {
    expect(usd(0)).toBe("$0.00");
    expect(usd(0.00156)).toBe("$0.0016");
    expect(usd(3.456)).toBe("$3.46");
    expect(usd(1234.4)).toBe("$1,234");
  });
});
