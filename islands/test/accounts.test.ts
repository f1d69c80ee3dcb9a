import { describe, expect, it } from "vitest";
import { AUTH_ERRORS, isNetworkError, pendingUrl, serverMessage, signUpProblem } from "../src/accounts/shared";
import { ApiError } from "../src/lib/api";

describe("sign-up validation (SPEC 5)", () => {
  const ok = { username: "ann", email: "ann@example.com", password: "secret1", confirm: "secret1" };
  it("accepts a complete form", () => expect(signUpProblem(ok)).toBeNull());
  it("asks for every field", () => {
    for (const f of ["username", "email", "password"] as const) {
      expect(signUpProblem({ ...ok, [f]: " ".repeat(f === "password" ? 0 : 1) })?.title).toBe("Missing Information");
    }
  });
  it("checks the confirmation before the length", () => {
    expect(signUpProblem({ ...ok, confirm: "other" })).toEqual({ title: "Password Mismatch", description: "Passwords do not match" });
    expect(signUpProblem({ ...ok, password: "12345", confirm: "12345" })).toEqual({
      title: "Weak Password",
      description: "Password must be at least 6 characters long",
    });
  });
});

describe("server messages", () => {
  it("reads {error} from a JSON body, else the text, else the fallback", () => {
    expect(serverMessage(new ApiError(409, "Conflict", '{"error":"Username is already taken"}'), "Registration failed")).toBe(
      "Username is already taken",
    );
    expect(serverMessage(new ApiError(502, "Bad Gateway", "upstream down"), "x")).toBe("upstream down");
    expect(serverMessage(new ApiError(500, "Internal", "<html>oops</html>"), "Login failed")).toBe("Login failed");
    expect(serverMessage(new Error("boom"), "Login failed")).toBe("Login failed");
  });
  it("tells network failures from HTTP answers", () => {
    expect(isNetworkError(new TypeError("Failed to fetch"))).toBe(true);
    expect(isNetworkError(new ApiError(500, "x", ""))).toBe(false);
  });
  it("knows the Google toast text", () => {
    expect(AUTH_ERRORS.google_unavailable).toEqual({
      title: "Authentication Error",
      description: "Google authentication is currently unavailable. Please try again later.",
    });
  });
  it("builds the pending address", () => expect(pendingUrl("a+b@x.io")).toBe("/email-verification-pending?email=a%2Bb%40x.io"));
});
