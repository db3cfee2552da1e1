import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";

import { ME, answering, refusal, signedIn } from "../test/fetch";
import { renderInConsole } from "../test/render";
import { AddUpstream } from "./AddUpstream";

const ENVS = [
  { id: "e1", name: "prod", description: "", gatewayHosts: [] },
  { id: "e2", name: "staging", description: "", gatewayHosts: [] },
];

async function open(answers: Parameters<typeof answering>[0] = {}) {
  signedIn();
  const calls = answering({ "GET /api/me": { body: ME }, ...answers });
  const onAdded = vi.fn();
  renderInConsole(<AddUpstream opened environments={ENVS} onClose={() => {}} onAdded={onAdded} />);
  const wizard = await screen.findByRole("dialog", { name: "Add Upstream" });
  return { calls, onAdded, wizard, user: userEvent.setup({ delay: null }) };
}

describe("the Add Upstream wizard", () => {
  it("keeps Next disabled until each step is complete", async () => {
    const { wizard, user } = await open();
    const next = within(wizard).getByRole("button", { name: "Next" });
    expect(next).toBeDisabled();
    await user.type(within(wizard).getByRole("textbox", { name: "Name" }), "orders");
    expect(next).toBeDisabled(); // no environment yet
    await user.click(within(wizard).getByRole("combobox", { name: "Environment" }));
    await user.click(screen.getByRole("option", { name: "staging" }));
    expect(next).toBeEnabled();
    await user.click(next);

    // Targets: a node first; service discovery hides manual entry and keeps Next disabled
    expect(next).toBeDisabled();
    await user.type(within(wizard).getByRole("textbox", { name: "Host" }), "10.0.0.5");
    await user.clear(within(wizard).getByRole("textbox", { name: "Port" }));
    await user.type(within(wizard).getByRole("textbox", { name: "Port" }), "8080");
    await user.click(within(wizard).getByRole("button", { name: "Add node" }));
    expect(within(wizard).getByText("10.0.0.5:8080 (weight 1)")).toBeInTheDocument();
    expect(next).toBeEnabled();
    await user.click(within(wizard).getByRole("switch", { name: "Service discovery" }));
    expect(within(wizard).queryByRole("textbox", { name: "Host" })).toBeNull();
    expect(next).toBeDisabled();
    await user.click(within(wizard).getByRole("switch", { name: "Service discovery" }));
    await user.click(within(wizard).getByRole("button", { name: "Remove 10.0.0.5:8080" }));
    expect(next).toBeDisabled(); // the node removed: none left
  });

  it("creates the upstream it describes, the API's refusal shown at the field", async () => {
    let attempts = 0;
    const { calls, onAdded, wizard, user } = await open({
      "POST /api/orgs/o1/envs/e1/upstreams": () =>
        ++attempts === 1
          ? refusal([
              {
                pointer: "/specification/checks/active/http_path",
                detail: "$.specification.checks.active.http_path: must start with '/'",
              },
            ])
          : { status: 201, body: { id: "u1" } },
    });
    await user.type(within(wizard).getByRole("textbox", { name: "Name" }), "orders");
    await user.click(within(wizard).getByRole("combobox", { name: "Environment" }));
    await user.click(screen.getByRole("option", { name: "prod" }));
    await user.click(within(wizard).getByRole("button", { name: "Next" }));
    await user.type(within(wizard).getByRole("textbox", { name: "Host" }), "10.0.0.5");
    await user.click(within(wizard).getByRole("button", { name: "Add node" }));
    await user.click(within(wizard).getByRole("combobox", { name: "Load balancing" }));
    await user.click(screen.getByRole("option", { name: "Least connections" }));
    await user.click(within(wizard).getByRole("button", { name: "Next" }));
    await user.click(within(wizard).getByRole("checkbox", { name: /Active checks/ }));
    const probe = within(wizard).getByRole("textbox", { name: "Probe path" });
    await user.clear(probe);
    await user.type(probe, "health");
    await user.click(within(wizard).getByRole("button", { name: "Create upstream" }));

    await waitFor(() => expect(probe).toHaveAttribute("aria-invalid", "true"));
    // at the field, and said above too (the field may be on another step than the last)
    expect(within(wizard).getAllByText(/must start with '\/'/)).toHaveLength(2);
    expect(onAdded).not.toHaveBeenCalled();

    await user.clear(probe);
    await user.type(probe, "/health");
    await user.click(within(wizard).getByRole("button", { name: "Create upstream" }));
    await waitFor(() => expect(onAdded).toHaveBeenCalledWith("e1"));
    const created = calls.filter((c) => c.method === "POST").at(-1)!;
    expect(created.body).toEqual({
      name: "orders",
      specification: {
        type: "least_conn",
        nodes: [{ host: "10.0.0.5", port: 80, weight: 1 }],
        checks: { active: { type: "http", http_path: "/health" } },
      },
    });
  });
});
