import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";

import { ME, answering, refusal, signedIn } from "../test/fetch";
import { renderInConsole } from "../test/render";
import RouteEditor, { routeErrors, routeOf } from "./RouteEditor";
import type { RouteSpec } from "./RouteEditor";

const BASE = "/api/orgs/o1/apis/a1";
const LIST: RouteSpec = {
  name: "list",
  uri: "/orders",
  methods: ["GET"],
  plugins: {},
  priority: 0,
  status: 1,
};

describe("routeOf", () => {
  it("leaves the optional fields left empty out, and keeps what the editor does not show", () => {
    const fields = { name: " ", uri: "/x", methods: [], script: "", serviceId: "", plugins: {} };
    expect(routeOf({ ...LIST, script: "return 1 + 1", service_id: "s" }, fields)).toEqual({
      uri: "/x",
      plugins: {},
      priority: 0,
      status: 1,
    });
    const given = {
      ...fields,
      name: "one",
      methods: ["POST"],
      script: "ngx.exit(403)",
      serviceId: "7",
    };
    expect(routeOf({ uri: "" }, given)).toEqual({
      name: "one",
      uri: "/x",
      methods: ["POST"],
      script: "ngx.exit(403)",
      service_id: "7",
      plugins: {},
    });
  });
});

describe("routeErrors", () => {
  it("gives each field of the edited route its error, and the rest as they are", () => {
    const found = routeErrors(
      {
        "/routeSpec/1/script": "$.script: must be at least 10 characters long",
        "/routeSpec/1/plugins/cors": "bad",
        "/routeSpec/0/uri": "$.uri: must start with '/'",
        "/routeSpec": "too many",
      },
      1,
    );
    expect(found.mine).toEqual({
      script: "$.script: must be at least 10 characters long",
      plugins: "bad",
    });
    expect(found.others).toEqual(["$.uri: must start with '/'", "too many"]);
  });
});

describe("RouteEditor", () => {
  async function open(answers: Parameters<typeof answering>[0], editable = true) {
    signedIn();
    const calls = answering({ "GET /api/me": { body: ME }, ...answers });
    const onSaved = vi.fn();
    renderInConsole(
      <RouteEditor
        base={BASE}
        revision={{ id: "r2", number: 2, status: "INACTIVE", routeSpec: [LIST] }}
        schemas={[]}
        editable={editable}
        readOnlyReason="A deployed revision is read-only: clone it to change it."
        onSaved={onSaved}
      />,
    );
    await screen.findByRole("heading", { name: "Routes of revision 2" });
    return { calls, onSaved, user: userEvent.setup({ delay: null }) };
  }

  it("adds a route; the API's refusal of a field is shown at that field", async () => {
    let attempts = 0;
    const { calls, onSaved, user } = await open({
      [`PUT ${BASE}/revisions/r2/route-spec`]: () =>
        ++attempts === 1
          ? refusal([
              {
                pointer: "/routeSpec/1/script",
                detail: "$.script: must be at least 10 characters long",
              },
            ])
          : { body: {} },
    });
    const table = screen.getByRole("table", { name: "Routes of revision 2" });
    expect(within(table).getAllByRole("row")).toHaveLength(2);
    await user.click(screen.getByRole("button", { name: "Add route" }));
    const dialog = await screen.findByRole("dialog", { name: "Add route" });
    await user.type(within(dialog).getByRole("textbox", { name: "Name" }), "create");
    await user.type(within(dialog).getByRole("textbox", { name: /^URI/ }), "/orders");
    await user.click(within(dialog).getByRole("combobox", { name: /^Methods/ }));
    await user.click(screen.getByRole("option", { name: "POST" }));
    const script = within(dialog).getByRole("textbox", { name: /^Script/ });
    await user.type(script, "short");
    await user.click(within(dialog).getByRole("button", { name: "Save route" }));

    await waitFor(() => expect(script).toHaveAttribute("aria-invalid", "true"));
    expect(
      within(dialog).getByText("$.script: must be at least 10 characters long"),
    ).toBeInTheDocument();
    expect(onSaved).not.toHaveBeenCalled();

    await user.clear(script); // no script at all is allowed
    await user.click(within(dialog).getByRole("button", { name: "Save route" }));
    await waitFor(() => expect(onSaved).toHaveBeenCalled());
    expect(calls.filter((c) => c.method === "PUT").at(-1)!.body).toEqual({
      routeSpec: [LIST, { name: "create", uri: "/orders", methods: ["POST"], plugins: {} }],
    });
  });

  it("removes a route", async () => {
    const { calls, onSaved, user } = await open({
      [`PUT ${BASE}/revisions/r2/route-spec`]: { body: {} },
    });
    await user.click(screen.getByRole("button", { name: "Remove route list" }));
    await waitFor(() => expect(onSaved).toHaveBeenCalled());
    expect(calls.at(-1)!.body).toEqual({ routeSpec: [] });
  });

  it("says why a revision cannot be edited", async () => {
    await open({}, false);
    expect(screen.getByText(/read-only: clone it/)).toBeInTheDocument();
    expect(screen.getByRole("button", { name: "Add route" })).toBeDisabled();
    expect(screen.queryByRole("button", { name: "Edit route list" })).toBeNull();
  });
});
