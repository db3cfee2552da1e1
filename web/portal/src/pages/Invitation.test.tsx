import { fireEvent, screen } from "@testing-library/react";
import { afterEach, expect, test, vi } from "vitest";

import { SessionProvider } from "../auth";
import { answers, renderPage } from "../test/render";
import { InvitationPage } from "./Invitation";

afterEach(() => vi.unstubAllGlobals());

test("an invitation is accepted with the account's password; a refusal is shown", async () => {
  const api = answers(
    {
      status: 400,
      body: { title: "Bad Request", status: 400, detail: "invalid or expired invitation" },
    },
    {
      status: 200,
      body: {
        data: { organisation_name: "Acme partners", account_status: "active", relationship: "r" },
      },
    },
  );
  vi.stubGlobal("fetch", api.fetch);
  renderPage(
    <SessionProvider>
      <InvitationPage />
    </SessionProvider>,
  );
  const password = screen.getByLabelText("Password", { exact: false, selector: "input" });
  fireEvent.change(password, { target: { value: "a brand new passphrase" } });
  fireEvent.click(screen.getByRole("button", { name: "Accept the invitation" }));
  expect((await screen.findByRole("alert")).textContent).toContain("invalid or expired");

  fireEvent.click(screen.getByRole("button", { name: "Accept the invitation" }));
  expect((await screen.findByRole("status")).textContent).toContain(
    "You are a member of Acme partners.",
  );
  expect(JSON.parse(String(api.calls[1].init.body))).toEqual({
    token: "",
    password: "a brand new passphrase",
  });
});
