import { MantineProvider } from "@mantine/core";
import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { MemoryRouter, Route, Routes } from "react-router";

import { useAuth } from "../auth";
import { AuthProvider } from "../auth";
import { ME, answering, refusal } from "../test/fetch";
import type { Call } from "../test/fetch";
import { AcceptInvitationPage } from "./AcceptInvitation";

const TOKENS = { token: "t2", refreshToken: "r2", expiresAt: "2099-01-01T00:00:00Z" };

function Landed() {
  const { me } = useAuth();
  return <p>Signed in as {me?.email}</p>;
}

/** The page as an invitation link opens it: ``/console/accept-invitation#<fragment>``. */
function open(fragment: string, answers: Parameters<typeof answering>[0] = {}) {
  window.history.replaceState(null, "", `/console/accept-invitation${fragment}`);
  const calls = answering({ "GET /api/me": { body: ME }, ...answers });
  render(
    <MantineProvider env="test">
      <MemoryRouter initialEntries={["/accept-invitation"]}>
        <AuthProvider>
          <Routes>
            <Route path="/accept-invitation" element={<AcceptInvitationPage />} />
            <Route path="/environments" element={<Landed />} />
          </Routes>
        </AuthProvider>
      </MemoryRouter>
    </MantineProvider>,
  );
  return { calls, user: userEvent.setup({ delay: null }) };
}

const accepts = (calls: Call[]) => calls.filter((c) => c.path === "/api/auth/accept-invitation");

describe("the invitation page", () => {
  it("sets a new account's password, the API's refusal at the field, then signs in", async () => {
    let attempts = 0;
    const { calls, user } = open("#token=abc-123", {
      "POST /api/auth/accept-invitation": () =>
        ++attempts === 1
          ? refusal([
              { pointer: "/password", detail: "$.password: must be at least 12 characters long" },
            ])
          : { body: TOKENS },
    });
    const form = screen.getByRole("form", { name: "Accept the invitation" });
    const password = within(form).getByLabelText(/^Choose a password/);
    const again = within(form).getByLabelText(/^Repeat the password/);
    await user.type(password, "short");
    await user.type(again, "shorter");
    await user.click(within(form).getByRole("button", { name: "Accept the invitation" }));
    expect(within(form).getByText("The two passwords differ.")).toBeInTheDocument();
    expect(accepts(calls)).toHaveLength(0); // checked here first

    await user.clear(again);
    await user.type(again, "short");
    await user.click(within(form).getByRole("button", { name: "Accept the invitation" }));
    expect(
      await within(form).findByText("must be at least 12 characters long"),
    ).toBeInTheDocument();
    expect(password).toHaveAttribute("aria-invalid", "true");

    await user.clear(password);
    await user.type(password, "a long enough password");
    await user.clear(again);
    await user.type(again, "a long enough password");
    await user.type(within(form).getByLabelText(/^Your name/), "Vera Viewer");
    await user.click(within(form).getByRole("button", { name: "Accept the invitation" }));
    expect(await screen.findByText(`Signed in as ${ME.email}`)).toBeInTheDocument();
    expect(accepts(calls).at(-1)!.body).toEqual({
      token: "abc-123",
      password: "a long enough password",
      displayName: "Vera Viewer",
    });
    expect(JSON.parse(sessionStorage.getItem("portico.console.tokens")!)).toEqual(TOKENS);
  });

  it("accepts with an existing account's password, and says what a refusal means", async () => {
    const { calls, user } = open("#token=xyz", {
      "POST /api/auth/accept-invitation": {
        status: 401,
        body: { title: "Unauthorized", status: 401, detail: "invalid or expired invitation" },
      },
    });
    await user.click(screen.getByText("I have an account"));
    const form = screen.getByRole("form", { name: "Accept the invitation" });
    expect(within(form).queryByLabelText(/^Repeat the password/)).toBeNull();
    await user.type(within(form).getByLabelText(/^Your password/), "my own password");
    await user.click(within(form).getByRole("button", { name: "Accept the invitation" }));
    expect(await within(form).findByRole("alert")).toHaveTextContent(
      "either the password is not that of the invited account, or the invitation is expired or already used",
    );
    expect(accepts(calls)[0].body).toEqual({ token: "xyz", password: "my own password" });
    expect(sessionStorage.getItem("portico.console.tokens")).toBeNull();
  });

  it("says so when the link lost its token", async () => {
    const { calls } = open("");
    expect(screen.getByRole("alert")).toHaveTextContent("This invitation link is incomplete");
    expect(screen.queryByRole("form")).toBeNull();
    expect(accepts(calls)).toHaveLength(0);
  });
});
