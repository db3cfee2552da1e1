import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";

import { ME, answering, signedIn } from "../test/fetch";
import type { Call } from "../test/fetch";
import { renderInConsole } from "../test/render";
import { EnvironmentsPage } from "./Environments";

const PROD = {
  id: "e1",
  name: "prod",
  description: "",
  gatewayHosts: ["api.example.com"],
};

function show(permissions: string[], answers: Parameters<typeof answering>[0] = {}) {
  signedIn();
  const me = { ...ME, orgs: [{ ...ME.orgs[0], permissions }] };
  const calls = answering({
    "GET /api/me": { body: me },
    "GET /api/orgs/o1/envs": { body: { items: [PROD], page: 1, size: 100, total: 1 } },
    ...answers,
  });
  renderInConsole(<EnvironmentsPage />);
  return { calls, user: userEvent.setup({ delay: null }) };
}

/** A 409 as the API answers it; a taken name or host names its field in ``errors``. */
function conflict(detail: string, pointer?: string) {
  const errors = pointer ? { errors: [{ pointer, detail }] } : {};
  return {
    status: 409,
    body: { type: "/problems/conflict", title: "Conflict", status: 409, detail, ...errors },
  };
}

const sent = (calls: Call[], method: string) => calls.filter((c) => c.method === method);

describe("the environments page", () => {
  it("adds an environment, a host the API refuses shown at the hosts field", async () => {
    let attempts = 0;
    const { calls, user } = show(["environment.read", "environment.manage"], {
      "POST /api/orgs/o1/envs": (call: Call) =>
        ++attempts === 1
          ? conflict("api.example.com already serves another environment", "/gatewayHosts/1")
          : { status: 201, body: { ...(call.body as object), id: "e2" } },
    });
    await screen.findByRole("table", { name: "Environments" });
    await user.click(screen.getByRole("button", { name: "Add environment" }));
    const form = await screen.findByRole("form", { name: "Add environment" });
    await user.type(within(form).getByRole("textbox", { name: /^Name/ }), "staging");
    const hosts = within(form).getByRole("combobox", { name: "Gateway hosts" });
    await user.type(hosts, "staging.example.com{Enter}api.example.com{Enter}");
    await user.click(within(form).getByRole("button", { name: "Create environment" }));
    expect(
      await within(form).findByText("api.example.com already serves another environment"),
    ).toBeInTheDocument();
    expect(hosts).toHaveAttribute("aria-invalid", "true");
    expect(sent(calls, "POST")[0].body).toEqual({
      name: "staging",
      description: "",
      gatewayHosts: ["staging.example.com", "api.example.com"],
    });

    await user.type(hosts, "{Backspace}"); // the taken host removed
    await user.click(within(form).getByRole("button", { name: "Create environment" }));
    await waitFor(() => expect(screen.queryByRole("form")).toBeNull());
    expect(sent(calls, "POST")[1].body).toMatchObject({ gatewayHosts: ["staging.example.com"] });
    // the list is asked again, to show the new one
    expect(calls.filter((c) => c.path === "/api/orgs/o1/envs?size=100")).toHaveLength(2);
  });

  it("changes an environment, a taken name shown at the name field", async () => {
    const { calls, user } = show(["environment.read", "environment.manage"], {
      "PATCH /api/orgs/o1/envs/e1": conflict("an environment named 'test' already exists", "/name"),
    });
    await screen.findByRole("table", { name: "Environments" });
    await user.click(screen.getByRole("button", { name: "Edit prod" }));
    const form = await screen.findByRole("form", { name: "Edit environment prod" });
    const name = within(form).getByRole("textbox", { name: /^Name/ });
    expect(within(form).getByText("api.example.com")).toBeInTheDocument(); // its host, as a pill
    await user.clear(name);
    await user.type(name, "test");
    await user.click(within(form).getByRole("button", { name: "Save environment" }));
    expect(
      await within(form).findByText("an environment named 'test' already exists"),
    ).toBeInTheDocument();
    expect(name).toHaveAttribute("aria-invalid", "true");
    expect(sent(calls, "PATCH")[0].body).toEqual({
      name: "test",
      description: "",
      gatewayHosts: ["api.example.com"],
    });
  });

  it("says why the API refuses a deletion", async () => {
    const detail = "environment 'prod' has deployed APIs; undeploy them first";
    const { calls, user } = show(["environment.read", "environment.manage"], {
      "DELETE /api/orgs/o1/envs/e1": conflict(detail),
    });
    await screen.findByRole("table", { name: "Environments" });
    await user.click(screen.getByRole("button", { name: "Delete prod" }));
    const dialog = await screen.findByRole("dialog", { name: "Delete environment prod" });
    await user.click(within(dialog).getByRole("button", { name: "Delete environment" }));
    expect(await within(dialog).findByRole("alert")).toHaveTextContent(detail);
    expect(sent(calls, "DELETE")).toHaveLength(1);
  });

  it("shows each action disabled, with the reason, without environment.manage", async () => {
    show(["environment.read"]);
    await screen.findByRole("table", { name: "Environments" });
    expect(screen.getByRole("button", { name: "Add environment" })).toBeDisabled();
    expect(screen.getByRole("button", { name: "Edit prod" })).toBeDisabled();
    expect(screen.getByRole("button", { name: "Delete prod" })).toBeDisabled();
    expect(
      screen.getByText(
        "Adding, changing or deleting an environment needs the environment.manage permission.",
      ),
    ).toBeInTheDocument();
  });
});
