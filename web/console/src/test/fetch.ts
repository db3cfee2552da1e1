import { vi } from "vitest";

export interface Call {
  method: string;
  path: string;
  body: unknown;
  headers: Record<string, string>;
}

type Answer =
  { status?: number; body?: unknown } | ((call: Call) => { status?: number; body?: unknown });

/** ``fetch`` answering ``"METHOD /path"`` from ``answers`` (a problem 404 otherwise), each
 * call recorded: what a component sends is checked, and its answers chosen, without a
 * server (the browser tests run the real one). */
export function answering(answers: Record<string, Answer>) {
  const calls: Call[] = [];
  const fetch = vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = new URL(String(input), "http://console.test");
    const call: Call = {
      method: init?.method ?? "GET",
      path: url.pathname + url.search,
      body: typeof init?.body === "string" ? JSON.parse(init.body) : init?.body,
      headers: (init?.headers ?? {}) as Record<string, string>,
    };
    calls.push(call);
    const found =
      answers[`${call.method} ${call.path}`] ?? answers[`${call.method} ${url.pathname}`];
    const answer = typeof found === "function" ? found(call) : found;
    const status = answer?.status ?? (answer ? 200 : 404);
    const body = answer ? answer.body : { title: "Not Found", status: 404, detail: "not found" };
    return new Response(status === 204 ? null : JSON.stringify(body ?? {}), {
      status,
      headers: { "content-type": status >= 400 ? "application/problem+json" : "application/json" },
    });
  });
  vi.stubGlobal("fetch", fetch);
  return calls;
}

export const ME = {
  id: "u1",
  email: "owner@example.com",
  displayName: "Owner",
  isPlatformAdmin: false,
  orgs: [
    {
      id: "o1",
      name: "Acme",
      roles: ["Administrator"],
      permissions: ["api.update", "upstream.manage"],
    },
  ],
};

/** Signed in as ``ME`` (a stored token; ``/api/me`` must be answered). */
export function signedIn() {
  sessionStorage.setItem(
    "portico.console.tokens",
    JSON.stringify({ token: "t1", refreshToken: "r1", expiresAt: "2099-01-01T00:00:00Z" }),
  );
}

/** A validation problem as the API answers it. */
export const refusal = (errors: { pointer: string; detail: string }[]) => ({
  status: 400,
  body: {
    type: "/problems/validation",
    title: "Bad Request",
    status: 400,
    detail: errors[0].detail,
    errors,
  },
});
