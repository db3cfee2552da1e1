import { describe, expect, it } from "vitest";

import { ApiError, atFields, get, invitationToken, query, storedTokens } from "./api";
import { answering, signedIn } from "./test/fetch";

describe("query", () => {
  it("writes the values given, leaving the empty ones out", () => {
    expect(query({ search: "ord ers", page: 2, size: 20, none: undefined, blank: "" })).toBe(
      "?search=ord+ers&page=2&size=20",
    );
    expect(query({ search: "" })).toBe("");
  });
});

describe("calls", () => {
  it("renew an expired token once through the refresh token, then repeat the call", async () => {
    signedIn();
    let renewed = false;
    const calls = answering({
      "GET /api/me": (call) =>
        call.headers.Authorization === "Bearer t2"
          ? { body: { email: "owner@example.com" } }
          : { status: 401, body: { title: "Unauthorized", detail: "token expired" } },
      "POST /api/auth/refresh": () => {
        renewed = true;
        return { body: { token: "t2", refreshToken: "r2", expiresAt: "2099-01-01T00:00:00Z" } };
      },
    });
    expect(await get("/api/me")).toEqual({ email: "owner@example.com" });
    expect(renewed).toBe(true);
    expect(calls.map((c) => `${c.method} ${c.path}`)).toEqual([
      "GET /api/me",
      "POST /api/auth/refresh",
      "GET /api/me",
    ]);
    expect(calls[1].body).toEqual({ refreshToken: "r1" });
    expect(storedTokens()?.token).toBe("t2");
  });

  it("sign out when the refresh token is refused too", async () => {
    signedIn();
    answering({
      "GET /api/me": { status: 401, body: { detail: "token expired" } },
      "POST /api/auth/refresh": { status: 401, body: { detail: "refresh token reused" } },
    });
    const failure = await get("/api/me").catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ApiError);
    expect((failure as ApiError).status).toBe(401);
    expect(storedTokens()).toBeNull();
  });

  it("keep a validation problem's errors by field", async () => {
    answering({
      "GET /x": {
        status: 400,
        body: {
          detail: "name: required",
          errors: [{ pointer: "/name", detail: "name: required" }],
        },
      },
    });
    const failure = (await get("/x").catch((error: unknown) => error)) as ApiError;
    expect(failure.message).toBe("name: required");
    expect(failure.fieldErrors()).toEqual({ "/name": "name: required" });
  });
});

describe("atFields", () => {
  it("leaves out the path a field's message starts with, and nothing else", () => {
    expect(
      atFields({
        "/gatewayHosts/0": "$.gatewayHosts[0]: 'x y' is not a hostname",
        "/name": "an environment named 'prod' already exists",
        "/note": "costs $.5: too much",
      }),
    ).toEqual({
      "/gatewayHosts/0": "'x y' is not a hostname",
      "/name": "an environment named 'prod' already exists",
      "/note": "costs $.5: too much",
    });
  });
});

describe("invitationToken", () => {
  it("reads the token of a link's fragment, or none", () => {
    expect(invitationToken("#token=abc-_123")).toBe("abc-_123");
    expect(invitationToken("#token=")).toBeNull();
    expect(invitationToken("")).toBeNull();
    expect(invitationToken("#samlCode=x")).toBeNull();
  });
});
