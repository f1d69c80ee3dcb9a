import { QueryClientProvider } from "@tanstack/react-query";
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import type { ReactNode } from "react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { AccountSettings } from "../src/accounts/AccountSettings";
import { createQueryClient } from "../src/lib/query";
import { json, routeFetch } from "./route-fetch";
import { getToasts, resetToasts } from "../src/lib/toast";

vi.setConfig({ testTimeout: 30_000 });

function wrap(ui: ReactNode) {
  return render(<QueryClientProvider client={createQueryClient()}>{ui}</QueryClientProvider>);
}

const sessions = [
  { id: "aaaaaaaaaaaaaaaa", createdAt: "2026-11-01T10:00:00Z", lastSeenAt: "2026-11-24T10:00:00Z", expiresAt: "", userAgent: null, device: "Firefox on Linux", current: true },
  { id: "bbbbbbbbbbbbbbbb", createdAt: "2026-10-01T10:00:00Z", lastSeenAt: "2026-11-20T10:00:00Z", expiresAt: "", userAgent: null, device: "Safari on iPhone", current: false },
];

beforeEach(() => resetToasts());
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe("AccountSettings", () => {
  it("checks the new password before asking, then changes it", async () => {
    const fetchMock = routeFetch({
      "GET /api/account/sessions": json(sessions),
      "POST /api/account/password": json({ message: "ok", signedOutSessions: 1 }),
    });
    wrap(<AccountSettings hasPassword username="ann" email="ann@example.com" />);
    fireEvent.change(screen.getByLabelText("Current password"), { target: { value: "secret1" } });
    fireEvent.change(screen.getByLabelText("New password"), { target: { value: "better1" } });
    fireEvent.change(screen.getByLabelText("Confirm new password"), { target: { value: "other1" } });
    fireEvent.click(screen.getByRole("button", { name: "Change Password" }));
    await waitFor(() => expect(getToasts()[0]?.title).toBe("Password Mismatch"));
    expect(fetchMock.mock.calls.some(([u]) => String(u).includes("/api/account/password"))).toBe(false);
    fireEvent.change(screen.getByLabelText("Confirm new password"), { target: { value: "better1" } });
    fireEvent.click(screen.getByRole("button", { name: "Change Password" }));
    await waitFor(() => expect(getToasts()[0]?.title).toBe("Password changed"));
    const call = fetchMock.mock.calls.find(([u]) => String(u).includes("/api/account/password"))!;
    expect(JSON.parse(String(call[1]?.body))).toEqual({ currentPassword: "secret1", newPassword: "better1", confirmPassword: "better1" });
  });

  it("lists sessions and signs out everywhere else", async () => {
    const fetchMock = routeFetch({
      "GET /api/account/sessions": json(sessions),
      "POST /api/account/sessions/revoke-others": json({ success: true, signedOutSessions: 1 }),
      "DELETE /api/account/sessions/bbbbbbbbbbbbbbbb": json({ success: true, current: false }),
    });
    wrap(<AccountSettings hasPassword username="ann" email="ann@example.com" />);
    expect(await screen.findByText("Safari on iPhone")).toBeDefined();
    expect(screen.getByText("This device")).toBeDefined();
    fireEvent.click(screen.getByRole("button", { name: "Sign Out Device" }));
    await waitFor(() => expect(getToasts()[0]?.title).toBe("Signed out"));
    fireEvent.click(screen.getByRole("button", { name: "Sign Out Everywhere Else" }));
    await waitFor(() => expect(getToasts()[0]?.description).toBe("1 other session was signed out."));
    expect(fetchMock.mock.calls.some(([u, i]) => String(u).includes("revoke-others") && i?.method === "POST")).toBe(true);
  });

  it("accounts without a password point to the reset and confirm deletion by username", async () => {
    const fetchMock = routeFetch({
      "GET /api/account/sessions": json([sessions[0]]),
      "POST /api/account/delete": json({ error: "For your security, sign in again with Google." }, 403),
    });
    wrap(<AccountSettings hasPassword={false} username="gwen" email="gwen@example.com" />);
    expect(screen.getByRole("link", { name: "Forgot password" }).getAttribute("href")).toBe("/forgot-password");
    fireEvent.click(screen.getByRole("button", { name: "Delete My Account" }));
    fireEvent.change(screen.getByLabelText("Type your username (gwen) to confirm"), { target: { value: "gwen" } });
    fireEvent.click(screen.getByRole("button", { name: "Delete Account" }));
    await waitFor(() => expect(getToasts()[0]?.description).toBe("For your security, sign in again with Google."));
    const call = fetchMock.mock.calls.find(([u]) => String(u).includes("/api/account/delete"))!;
    expect(JSON.parse(String(call[1]?.body))).toEqual({ confirm: "gwen" });
  });
});
