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

  it("a failure is logged and toasted: no redirect, counter kept (SPEC 8 over SPEC 4, islands/README.md)", async () => {
    vi.stubGlobal("fetch", vi.fn().mockResolvedValue(new Response("nope", { status: 500 })));
    incrementFreeUsageCount();
    const navigate = vi.fn();
    expect(await logout({ navigate })).toBe(false);
    vi.advanceTimersByTime(1000);
    expect(navigate).not.toHaveBeenCalled();
    expect(getToasts()[0]).toMatchObject({ title: "Logout failed", description: "You are still signed in. Please try again.", variant: "destructive" });
    expect(getFreeUsageCount()).toBe(1);
    expect(getLogs().at(-1)).toMatchObject({ level: "error", message: "Logout failed", source: "header" });
  });
});

describe("mobile menu", () => {
  it("is built from the server header without duplicate ids", async () => {
    const { buildMobileMenu } = await import("../src/header/header");
    document.body.innerHTML = `
      <header data-header><div class="header-inner">
        <nav id="site-nav" class="site-nav"><ul><li><a href="/" aria-current="page">Home</a></li><li><a href="/blog">Blog</a></li></ul></nav>
        <div class="header-actions">
          <button data-theme-toggle class="theme-toggle"></button>
          <div data-user-menu><button data-user-menu-button><span class="user-avatar">A</span><span class="user-name">ann</span></button>
          <div id="user-menu-panel" data-user-menu-panel><a href="/profile">Profile Settings</a><form data-logout><button>Logout</button></form></div></div>
        </div></div></header>`;
    const header = document.querySelector<HTMLElement>("[data-header]")!;
    const built = buildMobileMenu(header)!;
    expect(built.toggle.getAttribute("aria-controls")).toBe("mobile-menu");
    expect(built.toggle.getAttribute("aria-expanded")).toBe("false");
    expect(built.panel.hidden).toBe(true);
    expect(header.nextElementSibling).toBe(built.panel);
    expect(Array.from(built.panel.querySelectorAll("nav a")).map((a) => a.textContent)).toEqual(["Home", "Blog"]);
    expect(built.panel.querySelector('[aria-current="page"]')?.textContent).toBe("Home");
    expect(built.panel.querySelector(".user-name")?.textContent).toBe("ann");
    expect(built.panel.querySelector("form[data-logout]")).not.toBeNull();
    expect(built.panel.querySelector("[data-theme-toggle] .theme-toggle-label")).not.toBeNull();
    const ids = Array.from(document.querySelectorAll("[id]")).map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("signed out: the menu offers Login, Sign Up stays in the bar (once), and a backdrop comes with it", async () => {
    const { buildMobileMenu } = await import("../src/header/header");
    document.body.innerHTML = `
      <header data-header><div class="header-inner">
        <nav id="site-nav" class="site-nav"><ul><li><a href="/">Home</a></li></ul></nav>
        <div class="header-actions">
          <a class="btn btn-ghost" href="/auth">Login</a><a class="btn btn-primary" href="/auth">Sign Up</a>
        </div></div></header>`;
    const header = document.querySelector<HTMLElement>("[data-header]")!;
    const built = buildMobileMenu(header)!;
    expect(Array.from(built.panel.querySelectorAll(".mobile-menu-account a")).map((a) => a.textContent)).toEqual(["Login"]);
    expect(Array.from(document.querySelectorAll("a")).filter((a) => a.textContent === "Sign Up")).toHaveLength(1);
    expect(built.backdrop.hidden).toBe(true);
    expect(built.panel.nextElementSibling).toBe(built.backdrop);
  });
});
