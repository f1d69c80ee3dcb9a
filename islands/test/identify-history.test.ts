import { describe, expect, it } from "vitest";
import { filterAndSort, historyUrl, itemMatch, itemPoster, itemResult, itemTitle, pageCount, shortDate, type HistoryItem } from "../src/identify/history";

const items: HistoryItem[] = [
  { id: "a", title: "The Matrix", type: "movie", rating: 8.2, confidenceScore: 0.9, createdAt: "2026-11-20T10:00:00Z" },
  { id: "b", title: "Breaking Bad", type: "tv", rating: "9.5/10", confidenceScore: 0.6, createdAt: "2026-11-22T10:00:00Z" },
  { id: "c", title: "Matrix Reloaded", type: "movie", rating: null, confidenceScore: 0.99, createdAt: "2026-11-21T10:00:00Z" },
  { id: "d", title: "", fullResult: { type: "tv", poster: "/p.jpg" }, rating: 7, confidenceScore: null, createdAt: "bad" },
];
const ids = (xs: HistoryItem[]) => xs.map((x) => x.id);

describe("history sorting and filtering (SPEC History screen)", () => {
  it("sorts newest, oldest, by rating and by confidence", () => {
    expect(ids(filterAndSort(items, "", "all", "newest"))).toEqual(["b", "c", "a", "d"]);
    expect(ids(filterAndSort(items, "", "all", "oldest"))).toEqual(["d", "a", "c", "b"]);
    expect(ids(filterAndSort(items, "", "all", "rating"))).toEqual(["b", "a", "d", "c"]);
    expect(ids(filterAndSort(items, "", "all", "confidence"))).toEqual(["c", "a", "b", "d"]);
  });

  it("filters by title (case-insensitive) and type, never mutating the input", () => {
    const copy = [...items];
    expect(ids(filterAndSort(items, "matrix", "all", "newest"))).toEqual(["c", "a"]);
    expect(ids(filterAndSort(items, "  MATRIX ", "movie", "oldest"))).toEqual(["a", "c"]);
    expect(ids(filterAndSort(items, "", "tv", "newest"))).toEqual(["b", "d"]);
    expect(ids(filterAndSort(items, "unknown", "all", "newest"))).toEqual(["d"]);
    expect(filterAndSort(items, "zzz", "all", "newest")).toEqual([]);
    expect(items).toEqual(copy);
  });

  it("card facts: title fallback, poster fallback, match, short date", () => {
    expect(itemTitle(items[3]!)).toBe("Unknown Title");
    expect(itemPoster(items[3]!)).toBe("/p.jpg");
    expect(itemMatch(items[0]!)).toBe(90);
    expect(itemMatch(items[3]!)).toBe(70);
    expect(shortDate("2026-11-20T10:00:00Z", "en-US")).toBe("Nov 20");
    expect(shortDate("bad")).toBe("");
    expect(shortDate(undefined)).toBe("");
    expect(pageCount(41, 20)).toBe(3);
    expect(pageCount(0, 20)).toBe(1);
  });

  it("builds the modal's result from the row and its full result", () => {
    const r = itemResult({ id: "x1", title: "Heat", rating: 8.3, confidenceScore: 0.8, fullResult: { description: "LA crime", type: "movie" } });
    expect(r).toMatchObject({ identificationId: "x1", title: "Heat", rating: 8.3, description: "LA crime", confidenceScore: 0.8, type: "movie" });
  });

  it("asks the server for the search, type and order only when they narrow or change the list", () => {
    expect(historyUrl({ page: 1, limit: 20 })).toBe("/api/history?page=1&limit=20");
    expect(historyUrl({ page: 1, limit: 20, search: "  ", type: "all", sort: "newest" })).toBe("/api/history?page=1&limit=20");
    expect(historyUrl({ page: 2, limit: 20, search: " 100% matrix ", type: "tv", sort: "rating" })).toBe(
      "/api/history?page=2&limit=20&search=100%25+matrix&type=tv&sort=rating",
    );
  });
});
