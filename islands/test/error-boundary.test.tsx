import { act, cleanup, fireEvent, render, screen } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { BUG_REPORT_COPIED, ErrorBoundary, PERSISTS_TEXT } from "../src/lib/ErrorBoundary";

/** Throws while `state.broken` is true. */
const state = { broken: true };
function Flaky() {
  if (state.broken) throw new Error("500: the server fell over");
  return <p>All good</p>;
}

async function clickTryAgain() {
  fireEvent.click(screen.getByRole("button", { name: "Try Again" }));
  expect(screen.getByRole("button", { name: "Retrying..." })).toBeDefined();
  await act(async () => {
    vi.advanceTimersByTime(1000);
  });
}

beforeEach(() => {
  vi.useFakeTimers();
  state.broken = true;
  vi.spyOn(console, "error").mockImplementation(() => {});
});
afterEach(() => {
  cleanup();
  vi.useRealTimers();
});

describe("ErrorBoundary (SPEC Layout error screen)", () => {
  it("shows the error screen with a friendly message and the three buttons", () => {
    render(
      <ErrorBoundary>
        <Flaky />
      </ErrorBoundary>,
    );
    expect(screen.getByRole("heading", { name: "Something went wrong" })).toBeDefined();
    expect(screen.getByText("Server error. Please try again in a few moments.")).toBeDefined();
    for (const name of ["Try Again", "Go to Home", "Report Bug"]) expect(screen.getByRole("button", { name })).toBeDefined();
    expect(screen.queryByText(/Retry attempt/)).toBeNull();
  });

  it("retries after 1 s, counts attempts, and hides Try Again after 3", async () => {
    render(
      <ErrorBoundary>
        <Flaky />
      </ErrorBoundary>,
    );
    await clickTryAgain();
    expect(screen.getByText("Retry attempt 1 of 3")).toBeDefined();
    await clickTryAgain();
    expect(screen.getByText("Retry attempt 2 of 3")).toBeDefined();
    expect(screen.queryByText(PERSISTS_TEXT)).toBeNull();
    await clickTryAgain();
    expect(screen.getByText("Retry attempt 3 of 3")).toBeDefined();
    expect(screen.queryByRole("button", { name: "Try Again" })).toBeNull();
    expect(screen.getByText(PERSISTS_TEXT)).toBeDefined();
    expect(screen.getByRole("button", { name: "Go to Home" })).toBeDefined();
  });

  it("shows the children again when a retry succeeds", async () => {
    render(
      <ErrorBoundary>
        <Flaky />
      </ErrorBoundary>,
    );
    state.broken = false;
    await clickTryAgain();
    expect(screen.getByText("All good")).toBeDefined();
  });

  it("starts over when its reset keys change", async () => {
    const { rerender } = render(
      <ErrorBoundary resetKeys={["a"]}>
        <Flaky />
      </ErrorBoundary>,
    );
    await clickTryAgain();
    expect(screen.getByText("Retry attempt 1 of 3")).toBeDefined();
    rerender(
      <ErrorBoundary resetKeys={["b"]}>
        <Flaky />
      </ErrorBoundary>,
    );
    expect(screen.queryByText(/Retry attempt/)).toBeNull();
    expect(screen.getByRole("button", { name: "Try Again" })).toBeDefined();
    state.broken = false;
    rerender(
      <ErrorBoundary resetKeys={["c"]}>
        <Flaky />
      </ErrorBoundary>,
    );
    expect(screen.getByText("All good")).toBeDefined();
  });

  it("Report Bug copies the JSON report and tells the user", async () => {
    const writeText = vi.fn().mockResolvedValue(undefined);
    Object.defineProperty(navigator, "clipboard", { value: { writeText }, configurable: true });
    const alert = vi.spyOn(window, "alert").mockImplementation(() => {});
    render(
      <ErrorBoundary>
        <Flaky />
      </ErrorBoundary>,
    );
    await act(async () => {
      fireEvent.click(screen.getByRole("button", { name: "Report Bug" }));
    });
    expect(writeText).toHaveBeenCalledTimes(1);
    const report = JSON.parse(writeText.mock.calls[0]![0] as string);
    expect(Object.keys(report).sort()).toEqual(["errorId", "message", "stack", "time", "url", "userAgent"]);
    expect(report.message).toBe("500: the server fell over");
    expect(report.errorId).toMatch(/^err_/);
    expect(report.stack).toContain("Flaky");
    expect(report.url).toBe(window.location.href);
    expect(report.userAgent).toBe(navigator.userAgent);
    expect(Number.isNaN(Date.parse(report.time))).toBe(false);
    expect(alert).toHaveBeenCalledWith(BUG_REPORT_COPIED);
  });
});
