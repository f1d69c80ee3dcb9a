import { describe, expect, it } from "vitest";
import { classifyError, friendlyMessage, FRIENDLY, UPLOAD_ERROR_VIEW } from "../src/lib/errors";

describe("friendlyMessage (SPEC section 8)", () => {
  it.each([
    [new TypeError("Failed to fetch"), FRIENDLY.connection],
    [new Error("401: Unauthorized"), FRIENDLY.session],
    [new Error("request unauthorized"), FRIENDLY.session],
    [new Error("500: Internal Server Error"), FRIENDLY.server],
    [new Error("File is broken"), FRIENDLY.upload],
    [new Error("upload interrupted"), FRIENDLY.upload],
    [new Error("Something specific"), "Something specific"],
    ["just a string", FRIENDLY.unexpected],
    [null, FRIENDLY.unexpected],
    [new Error(""), FRIENDLY.unexpected],
  ])("%s -> %s", (error, expected) => {
    expect(friendlyMessage(error)).toBe(expected);
  });

  it("checks the rules in order: fetch before 401 before 500 before file", () => {
    expect(friendlyMessage(new Error("fetch 401 500 file"))).toBe(FRIENDLY.connection);
    expect(friendlyMessage(new Error("401 500 file"))).toBe(FRIENDLY.session);
    expect(friendlyMessage(new Error("500 file"))).toBe(FRIENDLY.server);
  });
});

describe("classifyError (SPEC section 5)", () => {
  it.each([
    ["Request timeout", "timeout"],
    ["Upload timed out after 120s", "timeout"],
    ["Invalid file", "format"],
    ["Unsupported format", "format"],
    ["File size exceeded", "size"],
    ["File too large", "size"],
    ["Network error. Please check your connection", "network"],
    ["connection reset", "network"],
    ["Nobody knows", "other"],
  ] as const)("%s -> %s", (text, kind) => {
    expect(classifyError(new Error(text))).toBe(kind);
    expect(classifyError(text)).toBe(kind);
  });

  it("has an upload error view title for every kind", () => {
    expect(UPLOAD_ERROR_VIEW.timeout.title).toBe("Upload Timed Out");
    expect(UPLOAD_ERROR_VIEW.format.title).toBe("File Format Issue");
    expect(UPLOAD_ERROR_VIEW.size.title).toBe("File Too Large");
    expect(UPLOAD_ERROR_VIEW.network.title).toBe("Connection Issue");
    expect(UPLOAD_ERROR_VIEW.other.title).toBe("Identification Failed");
  });
});
