import { MantineProvider } from "@mantine/core";
import { render, screen, within } from "@testing-library/react";
import type { ReactElement } from "react";
import { describe, expect, it } from "vitest";

import { DataTable, FetchedTable } from "./DataTable";

interface Row {
  id: string;
  name: string;
}

const columns = {
  label: "Things",
  columns: ["Name", "Length"],
  row: (item: Row) => [item.name, item.name.length],
  rowKey: (item: Row) => item.id,
  empty: "Nothing here yet.",
};

const show = (ui: ReactElement) => render(<MantineProvider env="test">{ui}</MantineProvider>);

describe("DataTable", () => {
  it("is a table named by its label, a row per item under its header", () => {
    show(
      <DataTable
        {...columns}
        items={[
          { id: "1", name: "orders" },
          { id: "2", name: "stock" },
        ]}
      />,
    );
    const table = screen.getByRole("table", { name: "Things" });
    const rows = within(table).getAllByRole("row");
    expect(rows.map((row) => row.textContent)).toEqual(["NameLength", "orders6", "stock5"]);
  });

  it("says its empty sentence instead of an empty table", () => {
    show(<DataTable {...columns} items={[]} />);
    expect(screen.getByText("Nothing here yet.")).toBeInTheDocument();
    expect(screen.queryByRole("table")).toBeNull();
  });
});

describe("FetchedTable", () => {
  const fetched = { reload: () => {}, loading: false };

  it("waits with a named loader, then shows the items", () => {
    const { rerender } = show(
      <FetchedTable {...columns} fetched={{ ...fetched, data: null, error: null }} />,
    );
    expect(screen.getByLabelText("Loading Things")).toBeInTheDocument();
    rerender(
      <MantineProvider env="test">
        <FetchedTable
          {...columns}
          fetched={{ ...fetched, data: { items: [{ id: "1", name: "orders" }] }, error: null }}
        />
      </MantineProvider>,
    );
    expect(screen.getByRole("table", { name: "Things" })).toHaveTextContent("orders");
  });

  it("shows the API's refusal", () => {
    const error = new Error("missing permission 'api.read'");
    show(<FetchedTable {...columns} fetched={{ ...fetched, data: null, error }} />);
    expect(screen.getByText("missing permission 'api.read'")).toBeInTheDocument();
  });
});
