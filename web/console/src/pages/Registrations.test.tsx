import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";

import { ME, answering, signedIn } from "../test/fetch";
import type { Call } from "../test/fetch";
import { renderInConsole } from "../test/render";
import { RegistrationsPage } from "./Registrations";

const DANA = {
  id: "u7",
  email: "dana@example.com",
  display_name: "Dana",
  created_at: "2026-01-01T10:00:00Z",
};
const TOKENS = { data: { id_token: "id1", refresh_token: "rf1" } };

function show(answers: Parameters<typeof answering>[0]) {
  signedIn();
  const calls = answering({ "GET /api/me": { body: ME }, ...answers });
  renderInConsole(<RegistrationsPage />);
  return { calls, user: userEvent.setup({ delay: null }) };
}

async function signInToTheAdminApi(user: ReturnType<typeof userEvent.setup>) {
  const form = await screen.findByRole("form", { name: "Sign in to the admin API" });
  await user.type(within(form).getByLabelText(/^Password/), "owner password");
  await user.click(within(form).getByRole("button", { name: "Sign in to the admin API" }));
  return form;
}

describe("the portal registrations page", () => {
  it("signs in to the admin API, then approves a registration", async () => {
    let pending = [DANA];
    const { calls, user } = show({
      "POST /api/admin/v1/auth/token": { body: TOKENS },
      "GET /api/admin/v1/users/pending": () => ({ body: { data: pending, meta: {} } }),
      "POST /api/admin/v1/users/u7/approve": () => {
        pending = [];
        return { body: { data: { ...DANA, status: "active" } } };
      },
    });
    await signInToTheAdminApi(user);
    const table = await screen.findByRole("table", { name: "Registrations awaiting approval" });
    expect(within(table).getByText("dana@example.com")).toBeInTheDocument();
    await user.click(within(table).getByRole("button", { name: "Approve dana@example.com" }));
    expect(await screen.findByRole("status")).toHaveTextContent("dana@example.com is approved");
    expect(screen.getByText("No registration awaits approval.")).toBeInTheDocument();

    const token = calls.find((c) => c.path === "/api/admin/v1/auth/token")!;
    expect(token.body).toEqual({ email: ME.email, password: "owner password" });
    const approve = calls.find((c: Call) => c.path.endsWith("/approve"))!;
    expect(approve.headers.Authorization).toBe("Bearer id1"); // the admin API's, not the console's
  });

  it("rejects one with the reason given", async () => {
    const { calls, user } = show({
      "POST /api/admin/v1/auth/token": { body: TOKENS },
      "GET /api/admin/v1/users/pending": { body: { data: [DANA], meta: {} } },
      "POST /api/admin/v1/users/u7/reject": { body: { data: { ...DANA, status: "rejected" } } },
    });
    await signInToTheAdminApi(user);
    await user.click(await screen.findByRole("button", { name: "Reject dana@example.com" }));
    const form = await screen.findByRole("form", { name: "Reject dana@example.com" });
    await user.type(within(form).getByLabelText(/^Reason/), "Not a customer of ours");
    await user.click(within(form).getByRole("button", { name: "Reject registration" }));
    await waitFor(() => expect(screen.queryByRole("form", { name: /^Reject/ })).toBeNull());
    const reject = calls.find((c) => c.path.endsWith("/reject"))!;
    expect(reject.body).toEqual({ reason: "Not a customer of ours" });
  });

  it("says what to do while token issuance is off", async () => {
    const { user } = show({
      "POST /api/admin/v1/auth/token": {
        status: 503,
        body: {
          type: "/problems/token-issuance-disabled",
          title: "Token Issuance Disabled",
          status: 503,
          detail: "token issuance is disabled",
        },
      },
    });
    const form = await signInToTheAdminApi(user);
    const alert = await within(form).findByRole("alert");
    expect(alert).toHaveTextContent("token issuance is off");
    expect(alert).toHaveTextContent("portico admin-api set-web-api-key");
    expect(sessionStorage.getItem("portico.console.admin-tokens")).toBeNull();
  });

  it("names the permission an account without it lacks", async () => {
    const { user } = show({
      "POST /api/admin/v1/auth/token": { body: TOKENS },
      "GET /api/admin/v1/users/pending": {
        status: 403,
        body: {
          title: "Forbidden",
          status: 403,
          detail: "missing permission 'administer users'",
        },
      },
    });
    await signInToTheAdminApi(user);
    expect(await screen.findByRole("alert")).toHaveTextContent(
      "may not approve registrations: that takes the admin API's “administer users” permission",
    );
  });
});
