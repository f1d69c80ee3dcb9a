import { QueryClientProvider } from "@tanstack/react-query";
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import History from "../src/islands/History";
import { createQueryClient } from "../src/lib/query";
import { getToasts, resetToasts } from "../src/lib/toast";

const item = (id: string, title: string, type: string, rating: number, conf: number, createdAt: string) => ({
  id,
  title,
  type,
  rating,
  confidenceScore: conf,
  createdAt,
  posterUrl: null,
  fullResult: { title, type, description: `${title} plot`, identificationId: id },
});

const page = {
  items: [
    item("a", "The Matrix", "movie", 8.2, 0.91, "2026-11-20T10:00:00Z"),
    item("b", "Breaking Bad", "tv", 9.5, 0.6, "2026-11-22T10:00:00Z"),
  ],
  total: 2,
  page: 1,
  limit: 20,
};

function mockFetch(handler: (url: string, init?: RequestInit) => Response | Promise<Response>) {
  const fn = vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => handler(String(input), init));
  vi.stubGlobal("fetch", fn);
  return fn;
}
const ok = (b: unknown) => new Response(JSON.stringify(b), { status: 200 });

// The island loads the result view lazily. Vitest compiles a module on its first import, so
// the first test to open it would otherwise spend its wait on compiling the view and its tabs
// (seconds on a busy machine) rather than on what the island does.
beforeAll(() => import("../src/identify/ResultView"), 30_000);

function renderHistory() {
  const client = createQueryClient();
  client.setDefaultOptions({ queries: { retry: false } });
  return render(
    <QueryClientProvider client={client}>
      <History />
    </QueryClientProvider>,
  );
}

// Rendering whole islands in jsdom is slow on a busy machine.
vi.setConfig({ testTimeout: 30_000 });

beforeEach(() => resetToasts());
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe("History island", () => {
  it("shows 8 skeleton cards while loading, then the cards with count, sorting and filters", async () => {
    mockFetch(() => ok(page));
    renderHistory();
    expect(screen.getByTestId("history-skeletons").children).toHaveLength(8);
    await screen.findByText("2 items");
    const titles = () => Array.from(document.querySelectorAll(".id-history-title")).map((e) => e.textContent);
    expect(titles()).toEqual(["Breaking Bad", "The Matrix"]);
    expect(screen.getByText("91% match")).toBeDefined();
    fireEvent.change(screen.getByLabelText("Sort by"), { target: { value: "oldest" } });
    expect(titles()).toEqual(["The Matrix", "Breaking Bad"]);
    fireEvent.change(screen.getByLabelText("Sort by"), { target: { value: "confidence" } });
    expect(titles()).toEqual(["The Matrix", "Breaking Bad"]);
    fireEvent.change(screen.getByLabelText("Type"), { target: { value: "tv" } });
    expect(titles()).toEqual(["Breaking Bad"]);
    fireEvent.change(screen.getByLabelText("Type"), { target: { value: "all" } });
    fireEvent.change(screen.getByPlaceholderText("Search by title..."), { target: { value: "nothing" } });
    expect(screen.getByText("No results found")).toBeDefined();
    expect(screen.getByText("Try adjusting your filters or search query")).toBeDefined();
  });

  it("opens the detail modal with the full result", async () => {
    mockFetch(() => ok(page));
    renderHistory();
    await screen.findByText("2 items");
    fireEvent.click(await screen.findByRole("button", { name: /^The Matrix,\s*Movie rated 8\.2,\s*91% match \w+ \d+, open details$/ }));
    expect(await screen.findByText("The Matrix plot")).toBeDefined();
    expect(screen.getByRole("button", { name: /Back/ })).toBeDefined();
    fireEvent.click(screen.getByRole("button", { name: "Close" }));
    await waitFor(() => expect(screen.queryByText("The Matrix plot")).toBeNull());
  });

  it("shows the empty state without history, and no Clear History button", async () => {
    mockFetch(() => ok({ items: [], total: 0, page: 1, limit: 20 }));
    renderHistory();
    expect(await screen.findByText("No history yet")).toBeDefined();
    expect(screen.getByText("Start identifying movies and TV shows to build your history")).toBeDefined();
    expect(screen.getByRole("link", { name: "Start Identifying" }).getAttribute("href")).toBe("/");
    expect(screen.queryByRole("button", { name: /Clear History/ })).toBeNull();
  });

  it("says No results found when a search or filter is active, even with no history at all", async () => {
    mockFetch(() => ok({ items: [], total: 0, totalAll: 0, page: 1, limit: 20 }));
    renderHistory();
    expect(await screen.findByText("No history yet")).toBeDefined();
    fireEvent.change(screen.getByLabelText("Type"), { target: { value: "tv" } });
    expect(await screen.findByText("No results found")).toBeDefined();
    expect(screen.getByText("Try adjusting your filters or search query")).toBeDefined();
    expect(screen.queryByText("No history yet")).toBeNull();
  });

  it("shows the error state with Try again", async () => {
    let fail = true;
    mockFetch(() => (fail ? new Response("boom", { status: 500 }) : ok(page)));
    renderHistory();
    expect(await screen.findByText("Something went wrong")).toBeDefined();
    expect(screen.getByText("We couldn't load your history. Please try again.")).toBeDefined();
    fail = false;
    fireEvent.click(screen.getByRole("button", { name: "Try again" }));
    expect(await screen.findByText("2 items")).toBeDefined();
  });

  it("clears history after confirming, and says so; a failure says so too", async () => {
    let cleared = false;
    let failDelete = true;
    mockFetch((url, init) => {
      if (init?.method === "DELETE") {
        if (failDelete) return new Response("nope", { status: 500 });
        cleared = true;
        return ok({ success: true });
      }
      return ok(cleared ? { items: [], total: 0, page: 1, limit: 20 } : page);
    });
    renderHistory();
    fireEvent.click(await screen.findByRole("button", { name: /Clear History/ }));
    expect(screen.getByText("Clear identification history?")).toBeDefined();
    expect(screen.getByText("This action cannot be undone. All your identification history will be permanently deleted.")).toBeDefined();
    const confirmButton = () => screen.getAllByRole("button", { name: /Clear History|Clearing\.\.\./ }).at(-1)!;
    fireEvent.click(confirmButton());
    await waitFor(() => expect(getToasts()[0]).toMatchObject({ title: "Error", description: "Failed to clear history. Please try again." }));
    failDelete = false;
    fireEvent.click(await screen.findByRole("button", { name: /Clear History/ }));
    fireEvent.click(confirmButton());
    await waitFor(() => expect(getToasts()[0]).toMatchObject({ title: "History cleared", description: "Your identification history has been cleared successfully." }));
    expect(await screen.findByText("No history yet")).toBeDefined();
  });
});
