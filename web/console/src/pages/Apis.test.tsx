import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";

import { ME, answering, signedIn } from "../test/fetch";
import type { Call } from "../test/fetch";
import { renderInConsole } from "../test/render";
import { ApisPage } from "./Apis";

const TOTAL = 10_000;

/** The API's answer to a list call: the page asked for, of TOTAL APIs named api-00001... */
function page(call: Call) {
  const asked = new URL(call.path, "http://x").searchParams;
  const search = asked.get("search") ?? "";
  const number = Number(asked.get("page") ?? 1);
  const size = Number(asked.get("size") ?? 20);
  const names = search ? ["api-04242"].filter((n) => n.includes(search)) : null;
  const total = names ? names.length : TOTAL;
  const items = (
    names ??
    Array.from(
      { length: size },
      (_, i) => `api-${String((number - 1) * size + i + 1).padStart(5, "0")}`,
    )
  ).map((name) => ({ id: name, name, desc: "", revisionCount: 1, deployments: [] }));
  return { body: { items, page: number, size, total } };
}

function show(permissions: string[]) {
  signedIn();
  const me = { ...ME, orgs: [{ ...ME.orgs[0], permissions }] };
  const calls = answering({ "GET /api/me": { body: me }, "GET /api/orgs/o1/apis": page });
  renderInConsole(<ApisPage />);
  return { calls, user: userEvent.setup({ delay: null }) };
}

describe("the APIs page", () => {
  it("asks the server for one page at a time, and for what is searched", async () => {
    const { calls, user } = show(["api.read", "api.create"]);
    const table = await screen.findByRole("table", { name: "APIs" });
    expect(within(table).getAllByRole("row")).toHaveLength(21);
    expect(screen.getByRole("status", { name: "APIs shown" })).toHaveTextContent("1–20 of 10,000");

    await user.click(screen.getByRole("button", { name: "Page 2" }));
    await waitFor(() => expect(within(table).getByText("api-00021")).toBeInTheDocument());
    expect(screen.getByRole("status", { name: "APIs shown" })).toHaveTextContent("21–40 of 10,000");

    await user.type(screen.getByRole("textbox", { name: "Search APIs" }), "4242");
    await waitFor(() => expect(within(table).getAllByRole("row")).toHaveLength(2));
    expect(within(table).getByText("api-04242")).toBeInTheDocument();
    const lists = calls.filter((c) => c.path.startsWith("/api/orgs/o1/apis"));
    // the whole list is never asked for: each call is a page of 20 (typing is debounced)
    expect(lists.every((c) => c.path.includes("size=20"))).toBe(true);
    expect(lists.at(-1)!.path).toBe("/api/orgs/o1/apis?search=4242&page=1&size=20");
  });

  it("shows Add Service disabled, with the reason, without api.create", async () => {
    const { user } = show(["api.read"]);
    await screen.findByRole("table", { name: "APIs" });
    expect(screen.getByRole("button", { name: "Add Service" })).toBeDisabled();
    await user.hover(screen.getByLabelText("Add Service needs the api.create permission"));
    expect(
      await screen.findByText("You need the api.create permission to add a service"),
    ).toBeInTheDocument();
  });
});
