import { QueryClientProvider } from "@tanstack/react-query";
import { cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import type { ReactNode } from "react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ApiKeys, keyErrorMessage } from "../src/accounts/ApiKeys";
import { tabFromHash } from "../src/islands/Profile";
import { ApiError } from "../src/lib/api";
import { createQueryClient } from "../src/lib/query";
import { json, routeFetch } from "./route-fetch";

vi.setConfig({ testTimeout: 30_000 });

function wrap(ui: ReactNode) {
  return render(<QueryClientProvider client={createQueryClient()}>{ui}</QueryClientProvider>);
}

const quota = { perMinute: { limit: 30, used: 0, remaining: 30 }, perDay: { limit: 1000, used: 7, remaining: 993 }, concurrent: { limit: 2, inUse: 0 } };
const older = { id: 3, name: "Old laptop", prefix: "rf_AbCdEfGh", createdAt: "2026-10-01T10:00:00Z", lastUsedAt: null };
const fresh = { id: 4, name: "Home server", prefix: "rf_ZyXwVuTs", createdAt: "2026-11-24T10:00:00Z", lastUsedAt: null, key: "rf_ZyXwVuTs0123456789abcdefghijklmnopqrstuv" };

function setClipboard(writeText: (s: string) => Promise<void>) {
  Object.defineProperty(navigator, "clipboard", { value: { writeText }, configurable: true });
}

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  Object.defineProperty(navigator, "clipboard", { value: undefined, configurable: true });
});

const status = () => screen.getByRole("status");

describe("ApiKeys", () => {
  it("creates a named key, shows it once with a working copy button, then hides it", async () => {
    // The server's list: what was made shows up on the next read.
    const live: unknown[] = [older];
    const fetchMock = routeFetch({
      "GET /api/keys": () => json({ keys: live })(),
      "GET /api/me/quota": json(quota),
      "POST /api/keys": () => {
        live.unshift({ ...fresh, key: undefined });
        return json(fresh, 201)();
      },
    });
    const writeText = vi.fn(async () => {});
    setClipboard(writeText);
    wrap(<ApiKeys />);
    expect(await screen.findByText("Old laptop")).toBeDefined();
    expect(screen.getByText("never used", { exact: false })).toBeDefined();
    expect(await screen.findByText(/1000 a day \(7 used today\)/)).toBeDefined();

    // An empty name is refused before asking the server.
    fireEvent.click(screen.getByRole("button", { name: "Create Key" }));
    expect((await screen.findByRole("alert")).textContent).toMatch(/Give the key a name/);
    expect(fetchMock.mock.calls.some(([, i]) => i?.method === "POST")).toBe(false);

    fireEvent.change(screen.getByLabelText("Key name"), { target: { value: "  Home server " } });
    fireEvent.click(screen.getByRole("button", { name: "Create Key" }));
    const field = (await screen.findByLabelText("Your new API key")) as HTMLInputElement;
    expect(field.value).toBe(fresh.key);
    expect(field.readOnly).toBe(true);
    const post = fetchMock.mock.calls.find(([, i]) => i?.method === "POST")!;
    expect(JSON.parse(String(post[1]?.body))).toEqual({ name: "Home server" });
    expect(document.activeElement?.textContent).toBe("Copy your new key now");
    expect(status().textContent).toMatch(/created.*shown only once/);
    // The new key is listed (without its secret) above the older one.
    const items = within(screen.getByRole("list", { name: "Your keys" })).getAllByRole("listitem");
    expect(items.map((li) => li.querySelector("strong")?.textContent)).toEqual(["Home server", "Old laptop"]);
    expect(screen.getByRole("list", { name: "Your keys" }).textContent).not.toContain(fresh.key);

    fireEvent.click(screen.getByRole("button", { name: "Copy Key" }));
    await screen.findByRole("button", { name: "Copied" });
    expect(writeText).toHaveBeenCalledWith(fresh.key);
    expect(screen.getByText("Copied to your clipboard.")).toBeDefined();
    expect(status().textContent).toBe("Key copied to the clipboard.");

    fireEvent.click(screen.getByRole("button", { name: "Done, I Saved It" }));
    expect(screen.queryByLabelText("Your new API key")).toBeNull();
    expect(document.activeElement).toBe(screen.getByLabelText("Key name"));
  });

  it("selects the key for copying by hand when the clipboard refuses", async () => {
    routeFetch({ "GET /api/keys": json({ keys: [] }), "GET /api/me/quota": json(quota), "POST /api/keys": json(fresh, 201) });
    setClipboard(async () => {
      throw new DOMException("denied", "NotAllowedError");
    });
    wrap(<ApiKeys />);
    expect(await screen.findByText("You have no API keys yet.")).toBeDefined();
    fireEvent.change(screen.getByLabelText("Key name"), { target: { value: "Home server" } });
    fireEvent.click(screen.getByRole("button", { name: "Create Key" }));
    const field = (await screen.findByLabelText("Your new API key")) as HTMLInputElement;
    fireEvent.click(screen.getByRole("button", { name: "Copy Key" }));
    await screen.findByText(/press Ctrl\+C/);
    expect(document.activeElement).toBe(field);
    expect(field.selectionStart).toBe(0);
    expect(field.selectionEnd).toBe(fresh.key.length);
    expect(screen.queryByRole("button", { name: "Copied" })).toBeNull();
  });

  it("says in plain words why a key was not made", async () => {
    routeFetch({
      "GET /api/keys": json({ keys: [older] }),
      "GET /api/me/quota": json(quota),
      "POST /api/keys": json({ error: "You already have 20 API keys. Revoke one you no longer use first.", message: "x", code: "conflict" }, 409),
    });
    wrap(<ApiKeys />);
    fireEvent.change(screen.getByLabelText("Key name"), { target: { value: "One more" } });
    fireEvent.click(screen.getByRole("button", { name: "Create Key" }));
    expect((await screen.findByRole("alert")).textContent).toBe("You already have 20 API keys. Revoke one you no longer use first.");
    expect(screen.getByLabelText("Key name").getAttribute("aria-invalid")).toBe("true");
    expect(screen.queryByLabelText("Your new API key")).toBeNull();
  });

  it("revokes a key only after confirming, then moves focus to the list", async () => {
    let live = [older];
    const fetchMock = routeFetch({
      "GET /api/keys": () => json({ keys: live })(),
      "GET /api/me/quota": json(quota),
      "DELETE /api/keys/3": () => {
        live = [];
        return json({ revoked: true, id: 3 })();
      },
    });
    wrap(<ApiKeys />);
    fireEvent.click(await screen.findByRole("button", { name: "Revoke Old laptop" }));
    const dialog = await screen.findByRole("dialog", { hidden: true });
    expect(dialog.textContent).toContain("rf_AbCdEfGh…");
    fireEvent.click(within(dialog).getByRole("button", { name: "Cancel", hidden: true }));
    expect(fetchMock.mock.calls.some(([, i]) => i?.method === "DELETE")).toBe(false);
    expect(screen.getByText("Old laptop")).toBeDefined();

    fireEvent.click(screen.getByRole("button", { name: "Revoke Old laptop" }));
    fireEvent.click(within(await screen.findByRole("dialog", { hidden: true })).getByRole("button", { name: "Revoke Key", hidden: true }));
    await waitFor(() => expect(screen.queryByText("Old laptop")).toBeNull());
    expect(fetchMock.mock.calls.some(([u, i]) => String(u) === "/api/keys/3" && i?.method === "DELETE")).toBe(true);
    expect(status().textContent).toMatch(/“Old laptop” revoked/);
    await waitFor(() => expect(document.activeElement?.textContent).toBe("Your keys"));
  });

  it("turns statuses into sentences", () => {
    expect(keyErrorMessage(new TypeError("Failed to fetch"), "x")).toMatch(/could not be reached/);
    expect(keyErrorMessage(new ApiError(401, "Unauthorized", '{"error":"Authentication required"}'), "x")).toMatch(/signed out/);
    expect(keyErrorMessage(new ApiError(429, "Too Many Requests", '{"error":"You made many API keys in the last hour. Please wait a while."}'), "x")).toBe(
      "You made many API keys in the last hour. Please wait a while.",
    );
    expect(keyErrorMessage(new ApiError(429, "Too Many Requests", ""), "x")).toMatch(/Too many requests/);
    expect(keyErrorMessage(new ApiError(500, "Internal Server Error", '{"error":"Internal error"}'), "Try again.")).toBe("Try again.");
  });

  it("opens the API keys tab from /profile#api-keys", () => {
    expect(tabFromHash("#api-keys")).toBe("api-keys");
    expect(tabFromHash("")).toBe("profile");
    expect(tabFromHash("#nope")).toBe("profile");
  });
});
