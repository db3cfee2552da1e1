import { fireEvent, screen } from "@testing-library/react";
import { afterEach, expect, test, vi } from "vitest";

import { SessionProvider } from "../auth";
import { answers, renderPage } from "../test/render";
import { SignInPage } from "./SignIn";

afterEach(() => {
  vi.unstubAllGlobals();
  sessionStorage.clear();
});

function signIn() {
  renderPage(
    <SessionProvider>
      <SignInPage />
    </SessionProvider>,
  );
  fireEvent.change(screen.getByLabelText("Email", { exact: false, selector: "input" }), {
    target: { value: "dev@example.com" },
  });
  fireEvent.change(screen.getByLabelText("Password", { exact: false, selector: "input" }), {
    target: { value: "a long enough passphrase" },
  });
  fireEvent.click(screen.getByRole("button", { name: "Sign in" }));
}

test("token issuance switched off is explained, with what the operator runs", async () => {
  const detail =
    "token issuance is disabled until an operator sets the identity provider's web API key";
  const api = answers({
    status: 503,
    body: {
      type: "/problems/token-issuance-disabled",
      title: "Token Issuance Disabled",
      status: 503,
      detail,
    },
  });
  vi.stubGlobal("fetch", api.fetch);
  signIn();
  const alert = await screen.findByRole("alert");
  expect(alert.textContent).toContain("Signing in is not switched on yet");
  expect(alert.textContent).toContain("Nothing is wrong with your email or password");
  expect(alert.textContent).toContain("portico admin-api set-web-api-key");
  expect(alert.textContent).not.toContain("Sign-in refused");
  expect(api.calls.map((c) => c.url)).toEqual(["/api/portal/v1/auth/token"]);
});

test("a refused password is still a refusal", async () => {
  const api = answers({
    status: 401,
    body: {
      type: "/problems/unauthorized",
      title: "Unauthorized",
      status: 401,
      detail: "invalid credentials",
    },
  });
  vi.stubGlobal("fetch", api.fetch);
  signIn();
  const alert = await screen.findByRole("alert");
  expect(alert.textContent).toContain("Sign-in refused");
  expect(alert.textContent).toContain("invalid credentials");
});
