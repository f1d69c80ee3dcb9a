import { QueryClientProvider } from "@tanstack/react-query";
import { act, cleanup, fireEvent, render, screen } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import AuthScreen, { nav, welcomeToast } from "../src/islands/AuthScreen";
import { createQueryClient } from "../src/lib/query";
import { BENEFITS, WelcomeOnboarding } from "../src/pwa/WelcomeOnboarding";

function jsonResponse(status: number, body: unknown) {
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });
}

afterEach(() => {
  cleanup();
  sessionStorage.clear();
});

describe("welcome onboarding", () => {
  it("shows welcome, then the four benefits; Skip for Now declines and points to PWA Settings", () => {
    const onFinish = vi.fn();
    render(<WelcomeOnboarding open username="ann" siteName="Reelfind" onFinish={onFinish} />);
    expect(screen.getByRole("heading", { name: "Welcome to Reelfind, ann!" })).toBeTruthy();
    fireEvent.click(screen.getByRole("button", { name: "Next" }));
    for (const b of BENEFITS) expect(screen.getByText(b.title)).toBeTruthy();
    expect(BENEFITS.map((b) => b.title)).toEqual(["Instant Results", "Save Time", "New Features", "Special Offers"]);
    fireEvent.click(screen.getByRole("button", { name: "Skip for Now" }));
    expect(screen.getByRole("heading", { name: "No problem" })).toBeTruthy();
    expect(screen.getByRole("link", { name: "PWA Settings" }).getAttribute("href")).toBe("/pwa-settings");
    fireEvent.click(screen.getByRole("button", { name: "Get Started" }));
    expect(onFinish).toHaveBeenCalledWith("declined");
  });

  it("Enable without push support (jsdom has none) declines with the SPEC's message", () => {
    const onFinish = vi.fn();
    render(<WelcomeOnboarding open username="ann" siteName="Reelfind" onFinish={onFinish} />);
    fireEvent.click(screen.getByRole("button", { name: "Next" }));
    fireEvent.click(screen.getByRole("button", { name: "Enable Notifications" }));
    expect(screen.getByRole("alert").textContent).toBe("Push notifications are not supported in this browser");
    fireEvent.click(screen.getByRole("button", { name: "Get Started" }));
    expect(onFinish).toHaveBeenCalledWith("failed");
  });

  it("Escape on the first steps counts as Skip for Now", () => {
    render(<WelcomeOnboarding open username="ann" siteName="Reelfind" onFinish={() => {}} />);
    fireEvent.keyDown(screen.getByRole("dialog", { hidden: true }), { key: "Escape" });
    expect(screen.getByRole("heading", { name: "No problem" })).toBeTruthy();
  });

  it("welcome toasts vary by outcome", () => {
    expect(welcomeToast("Reelfind", "ann", "enabled").description).toBe("Welcome to Reelfind, ann! Notifications are on.");
    expect(welcomeToast("Reelfind", "ann", "declined").description).toMatch(/PWA Settings/);
    expect(welcomeToast("Reelfind", "ann", "failed").title).toBe("Account created!");
  });
});

describe("registration opens the onboarding", () => {
  let go: ReturnType<typeof vi.fn<(url: string) => void>>;
  beforeEach(() => {
    go = vi.fn<(url: string) => void>();
    vi.spyOn(nav, "go").mockImplementation(go);
  });

  it("after sign-up the dialog shows; finishing goes home with the welcome toast queued", async () => {
    const fetchMock = vi.fn(async (_url: string, _init?: RequestInit) =>
      jsonResponse(200, { id: 1, username: "ann", email: "ann@example.com" }),
    );
    vi.stubGlobal("fetch", fetchMock);
    render(
      <QueryClientProvider client={createQueryClient()}>
        <AuthScreen initialTab="signup" siteName="Reelfind" />
      </QueryClientProvider>,
    );
    fireEvent.change(screen.getByLabelText("Username"), { target: { value: "ann" } });
    fireEvent.change(screen.getByLabelText("Email"), { target: { value: "ann@example.com" } });
    fireEvent.change(screen.getByLabelText("Password"), { target: { value: "secret1" } });
    fireEvent.change(screen.getByLabelText("Confirm Password"), { target: { value: "secret1" } });
    await act(async () => {
      fireEvent.click(screen.getByRole("button", { name: "Create Account" }));
    });
    expect(fetchMock).toHaveBeenCalledWith("/api/register", expect.objectContaining({ method: "POST" }));
    expect(screen.getByRole("heading", { name: "Welcome to Reelfind, ann!" })).toBeTruthy();
    expect(go).not.toHaveBeenCalled();
    fireEvent.click(screen.getByRole("button", { name: "Skip for Now" }));
    fireEvent.click(screen.getByRole("button", { name: "Get Started" }));
    expect(go).toHaveBeenCalledWith("/");
    // Declined: no preferences are sent (only a finished-with-success onboarding reports them).
    expect(fetchMock.mock.calls.some((c) => String(c[0]).includes("notification-preferences"))).toBe(false);
    expect(sessionStorage.length).toBeGreaterThan(0);
  });
});
