import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { LOGOUT_REDIRECT_MS, logout } from "../src/header/header";
import { getLogs, clearLogs } from "../src/lib/log";
import { getFreeUsageCount, incrementFreeUsageCount } from "../src/lib/storage";
import { getToasts, resetToasts } from "../src/lib/toast";

beforeEach(() => {
  vi.useFakeTimers();
  resetToasts();
  clearLogs();
  localStorage.clear();
  sessionStorage.clear();
  vi.spyOn(console, "error").mockImplementation(() => {});
});
afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

describe("logout (SPEC section 4 Session)", () => {
  it("posts /api/logout, toasts, clears the counter and cache, then goes home about 100 ms later", async () => {
    const fetchMock = vi.fn().mockResolvedValue(new Response('{"ok":true}'));
    vi.stubGlobal("fetch", fetchMock);
    incrementFreeUsageCount();
    const navigate = vi.fn();
    const onLoggedOut = vi.fn();
    expect(await logout({ navigate, onLoggedOut })).toBe(true);
    expect(fetchMock).toHaveBeenCalledWith("/api/logout", expect.objectContaining({ method: "POST", credentials: "include" }));
    expect(getToasts()[0]).toMatchObject({ title: "Logged out", description: "You have been successfully logged out." });
    expect(getFreeUsageCount()).toBe(0);
    expect(onLoggedOut).toHaveBeenCalled();
    expect(navigate).not.toHaveBeenCalled();
    vi.advanceTimersByTime(LOGOUT_REDIRECT_MS);
    expect(navigate).toHaveBeenCalledWith("/");
  });

  it("only logs a failure: no toast, no redirect, counter kept", async () => {
    vi.stubGlobal("fetch", vi.fn().mockResolvedValue(new Response("nope", { status: 500 })));
    incrementFreeUsageCount();
    const navigate = vi.fn();
    expect(await logout({ navigate })).toBe(false);
    vi.advanceTimersByTime(1000);
    expect(navigate).not.toHaveBeenCalled();
    expect(getToasts()).toHaveLength(0);
    expect(getFreeUsageCount()).toBe(1);
    expect(getLogs().at(-1)).toMatchObject({ level: "error", message: "Logout failed", source: "header" });
  });
});
