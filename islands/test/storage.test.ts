import { beforeEach, describe, expect, it, vi } from "vitest";
import { clearLogs, getLogs, LOG_LIMIT, logWarning } from "../src/lib/log";
import {
  clearFreeUsageCount,
  getFreeUsageCount,
  getItem,
  incrementFreeUsageCount,
  isFreeUsageExhausted,
  setItem,
  StorageKeys,
} from "../src/lib/storage";
import { effectiveMotion, getTheme, nextTheme, setTheme } from "../src/lib/theme";

beforeEach(() => localStorage.clear());

describe("storage", () => {
  it("counts free identifications under freeUsageCount", () => {
    expect(getFreeUsageCount()).toBe(0);
    expect(isFreeUsageExhausted()).toBe(false);
    expect(incrementFreeUsageCount()).toBe(1);
    expect(localStorage.getItem("freeUsageCount")).toBe("1");
    expect(isFreeUsageExhausted()).toBe(true);
    clearFreeUsageCount();
    expect(getFreeUsageCount()).toBe(0);
    localStorage.setItem("freeUsageCount", "garbage");
    expect(getFreeUsageCount()).toBe(0);
  });

  it("survives a storage that throws", () => {
    const spy = vi.spyOn(Storage.prototype, "getItem").mockImplementation(() => {
      throw new Error("SecurityError");
    });
    vi.spyOn(Storage.prototype, "setItem").mockImplementation(() => {
      throw new Error("QuotaExceededError");
    });
    expect(getItem("theme")).toBeNull();
    expect(setItem("theme", "dark")).toBe(false);
    expect(getTheme()).toBe("system");
    spy.mockRestore();
  });

  it("names the documented keys", () => {
    expect(StorageKeys.testimonialCompleted(42)).toBe("testimonial-completed-42");
    expect(StorageKeys.theme).toBe("theme");
  });
});

describe("theme and motion", () => {
  it("stores the theme and reflects it on <html>", () => {
    expect(getTheme()).toBe("system");
    setTheme("dark");
    expect(localStorage.getItem("theme")).toBe("dark");
    expect(document.documentElement.dataset.theme).toBe("dark");
    expect(["light", "dark", "system"].map((t) => nextTheme(t as "light"))).toEqual(["dark", "system", "light"]);
  });

  it("lowers the full animation level to reduced when the system asks", () => {
    expect(effectiveMotion("full", false)).toBe("full");
    expect(effectiveMotion("full", true)).toBe("reduced");
    expect(effectiveMotion("none", true)).toBe("none");
  });
});

describe("client log", () => {
  it("keeps the last 100 entries with the SPEC fields", () => {
    clearLogs();
    vi.spyOn(console, "warn").mockImplementation(() => {});
    for (let i = 0; i < LOG_LIMIT + 5; i++) logWarning(`w${i}`, "test");
    const logs = getLogs();
    expect(logs).toHaveLength(100);
    expect(logs[0]!.message).toBe("w5");
    expect(Object.keys(logs[0]!).sort()).toEqual(
      ["id", "level", "message", "source", "stack", "timestamp", "url", "userAgent", "userId"].sort(),
    );
  });
});
