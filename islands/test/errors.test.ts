import { describe, expect, it } from "vitest";
import { ApiError } from "../src/lib/api";
import { classifyError, errorCode, friendlyMessage, FRIENDLY, UPLOAD_ERROR_VIEW } from "../src/lib/errors";

/** An error answer of our server: JSON `{error, message, code}`. */
const serverError = (status: number, code: string, message: string) =>
  new ApiError(status, "", JSON.stringify({ error: "x", message, code }));

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

describe("the server's error code (src/error_code.rs) before the text", () => {
  it("reads the code of a JSON error body, and nothing else", () => {
    expect(errorCode(serverError(413, "file_too_large", "too big"))).toBe("file_too_large");
    expect(errorCode(new ApiError(502, "Bad Gateway", "<html>file_too_large</html>"))).toBeNull();
    expect(errorCode(serverError(400, "a_code_we_do_not_know", "x"))).toBeNull();
    expect(errorCode(new ApiError(400, "", JSON.stringify({ code: 7 })))).toBeNull();
    expect(errorCode(new Error("file_too_large"))).toBeNull();
    expect(errorCode("file_too_large")).toBeNull();
  });

  it.each([
    // The code wins over words that would mislead the text rules.
    ["file_too_large", "Invalid size: the file is large", "size"],
    ["payload_too_large", "Request body rejected", "size"],
    ["invalid_file_format", "File too large to be a picture", "format"],
    ["unsupported_media_type", "Expected multipart", "format"],
    ["upload_timeout", "Invalid upload", "timeout"],
    ["timeout", "The AI engine did not answer", "timeout"],
    ["upload_interrupted", "The upload could not be read. Please try again.", "network"],
  ] as const)("%s (%s) -> %s", (code, message, kind) => {
    expect(classifyError(serverError(400, code, message))).toBe(kind);
  });

  it("falls back to the text when the code leaves the kind open or there is none", () => {
    expect(classifyError(serverError(400, "validation_failed", "Invalid file"))).toBe("format");
    expect(classifyError(serverError(503, "engine_busy", "busy"))).toBe("other");
    expect(classifyError(new ApiError(504, "Gateway Timeout", "<html>504 Gateway Timeout</html>"))).toBe("timeout");
    expect(classifyError(new ApiError(400, "", "not json, file too large"))).toBe("size");
  });

  it("classifies the given text (the message shown) when the code says nothing", () => {
    expect(classifyError(serverError(422, "validation_failed", "url unreachable"), "Invalid file format.")).toBe("format");
    expect(classifyError(serverError(413, "file_too_large", "x"), "Invalid file format.")).toBe("size");
    expect(classifyError(new Error("boom"), "Upload timed out")).toBe("timeout");
  });

  it("friendly messages by code, by text without one", () => {
    expect(friendlyMessage(serverError(401, "not_authenticated", "Not authenticated"))).toBe(FRIENDLY.session);
    expect(friendlyMessage(serverError(500, "internal_error", "Something went wrong"))).toBe(FRIENDLY.server);
    expect(friendlyMessage(serverError(413, "file_too_large", "Too big"))).toBe(FRIENDLY.upload);
    // A code with no friendly message of its own: the text rules, as for any error.
    expect(friendlyMessage(serverError(403, "forbidden", "Admin access required"))).toBe('403: {"error":"x","message":"Admin access required","code":"forbidden"}');
    expect(friendlyMessage(new ApiError(500, "Internal Server Error", "<html>proxy</html>"))).toBe(FRIENDLY.server);
  });
});
