import { afterEach, expect, test, vi } from "vitest";

import { portal, Problem, tokenStore } from "./api";
import { answers } from "./test/render";

afterEach(() => vi.unstubAllGlobals());

const bearer = (init: RequestInit) => new Headers(init.headers).get("Authorization");

test("a refused body's fields are kept by pointer, without the path the API prefixes", () => {
  const problem = new Problem(400, {
    type: "/problems/validation",
    title: "Validation Failed",
    detail: "$.password: must be at least 12 characters long",
    errors: [
      {
        pointer: "/password",
        detail: "$.password: must be at least 12 characters long",
      },
      { pointer: "/display_name", detail: "$.display_name: must not be blank" },
    ],
  });
  expect(problem.kind).toBe("validation");
  expect(problem.message).toBe("$.password: must be at least 12 characters long");
  expect(problem.fields).toEqual({
    "/password": "must be at least 12 characters long",
    "/display_name": "must not be blank",
  });
});

test("a 401 renews the ID token once and asks again; concurrent ones share the renewal", async () => {
  tokenStore.write({ id_token: "old", refresh_token: "r1" });
  const api = answers(
    { status: 401, body: { title: "Unauthorized", status: 401 } },
    { status: 401, body: { title: "Unauthorized", status: 401 } },
    { status: 200, body: { data: { id_token: "new", refresh_token: "r2" } } },
    { status: 200, body: { data: { id: "me" } } },
    { status: 200, body: { data: { id: "me" } } },
  );
  vi.stubGlobal("fetch", api.fetch);

  const both = await Promise.all([portal("GET", "/me"), portal("GET", "/me")]);

  expect(both).toEqual([{ id: "me" }, { id: "me" }]);
  const refreshes = api.calls.filter((call) => call.url.endsWith("/auth/token/refresh"));
  expect(refreshes.map((call) => JSON.parse(String(call.init.body)))).toEqual([
    { refresh_token: "r1" },
  ]);
  const retried = api.calls.slice(3).map((call) => bearer(call.init));
  expect(retried).toEqual(["Bearer new", "Bearer new"]);
  expect(tokenStore.read()).toEqual({ id_token: "new", refresh_token: "r2" });
});

test("a refused renewal signs the tab out and the call fails with its 401", async () => {
  tokenStore.write({ id_token: "old", refresh_token: "spent" });
  const api = answers(
    {
      status: 401,
      body: { title: "Unauthorized", status: 401, detail: "invalid token" },
    },
    { status: 401, body: { title: "Unauthorized", status: 401 } },
  );
  vi.stubGlobal("fetch", api.fetch);

  await expect(portal("GET", "/apps")).rejects.toMatchObject({
    status: 401,
    message: "invalid token",
  });
  expect(tokenStore.read()).toBeNull();
  expect(api.calls).toHaveLength(2); // no second try without a token
});
