import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  dismiss,
  getToasts,
  mountToaster,
  resetToasts,
  showPendingToast,
  toast,
  TOAST_DEFAULT_DURATION,
  toastAfterNavigation,
} from "../src/lib/toast";

let unmount: () => void = () => {};
beforeEach(() => {
  vi.useFakeTimers();
  resetToasts();
  unmount = mountToaster();
});
afterEach(() => {
  unmount();
  vi.useRealTimers();
});

const shown = () => Array.from(document.querySelectorAll<HTMLElement>(".toast"));

describe("toasts", () => {
  it("shows one at a time: a new toast replaces the current one", () => {
    toast({ title: "First" });
    toast({ title: "Second", description: "More" });
    expect(getToasts().filter((t) => t.open)).toHaveLength(1);
    expect(shown()).toHaveLength(1);
    expect(shown()[0]!.textContent).toContain("Second");
    expect(shown()[0]!.textContent).toContain("More");
  });

  it("closes by itself after 5 s by default", () => {
    expect(TOAST_DEFAULT_DURATION).toBe(5000);
    toast({ title: "Saved" });
    vi.advanceTimersByTime(4999);
    expect(shown()).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(shown()).toHaveLength(0);
  });

  it("puts default toasts in a status region and destructive ones in an alert region", () => {
    toast({ title: "Hello" });
    expect(shown()[0]!.parentElement!.getAttribute("role")).toBe("status");
    toast({ title: "Error", description: "Failed to clear history. Please try again.", variant: "destructive" });
    expect(shown()).toHaveLength(1);
    expect(shown()[0]!.parentElement!.getAttribute("role")).toBe("alert");
    expect(shown()[0]!.classList.contains("toast-destructive")).toBe(true);
  });

  it("closes with its close button and with dismiss()", () => {
    toast({ title: "One" });
    (document.querySelector(".toast-close") as HTMLButtonElement).click();
    expect(shown()).toHaveLength(0);
    const t = toast({ title: "Two" });
    dismiss(t.id);
    expect(shown()).toHaveLength(0);
  });

  it("carries a toast over to the next page", () => {
    toastAfterNavigation({ title: "Logged out", description: "You have been successfully logged out." });
    showPendingToast();
    expect(shown()[0]!.textContent).toContain("Logged out");
    showPendingToast();
    expect(sessionStorage.length).toBe(0);
  });
});

describe("where toasts go (never over a primary button)", () => {
  it("stays at the bottom unless it would cover a primary button there, then goes up under the header", async () => {
    const { chooseToastSide } = await import("../src/lib/toast");
    const box = { left: 16, right: 374, height: 80 }; // a phone at 390 x 844
    const at = (top: number, height = 48) => ({ top, bottom: top + height, left: 24, right: 366 });
    expect(chooseToastSide(box, 844, 64, [])).toBe("bottom");
    expect(chooseToastSide(box, 844, 64, [at(400)])).toBe("bottom");
    // "Create Account" near the bottom of the screen.
    expect(chooseToastSide(box, 844, 64, [at(740)])).toBe("top");
    // Buttons at both places: the bottom, as before.
    expect(chooseToastSide(box, 844, 64, [at(740), at(90)])).toBe("bottom");
    // A button beside the toast, not under it (desktop: the toast sits at the right).
    expect(chooseToastSide({ left: 884, right: 1264, height: 80 }, 900, 64, [{ top: 820, bottom: 860, left: 100, right: 300 }])).toBe("bottom");
  });
});
