import { MantineProvider } from "@mantine/core";
import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { JsonDiff } from "./JsonDiff";

const renderDiff = (from: unknown, to: unknown) =>
  render(
    <MantineProvider env="test">
      <JsonDiff from={from} to={to} label="Changes" />
    </MantineProvider>,
  );

describe("JsonDiff", () => {
  it("marks removed lines with '-', added ones with '+', the rest as context", () => {
    renderDiff(
      { name: "edge", gatewayHosts: ["old.example.com"] },
      { name: "edge", gatewayHosts: ["new.example.com"] },
    );
    const lines = screen.getByLabelText("Changes").textContent!.split("\n");
    expect(lines).toContain('-     "old.example.com"');
    expect(lines).toContain('+     "new.example.com"');
    expect(lines).toContain('    "name": "edge",');
    expect(lines.filter((line) => /^[+-]/.test(line))).toHaveLength(2);
  });

  it("shows a creation as every line added (nothing before)", () => {
    renderDiff(null, { name: "orders" });
    const text = screen.getByLabelText("Changes").textContent!;
    expect(text).toContain('+   "name": "orders"');
    expect(text).not.toMatch(/^-/m);
  });

  it("says so when nothing differs", () => {
    renderDiff({ a: [1, 2] }, { a: [1, 2] });
    expect(screen.getByText("No difference.")).toBeInTheDocument();
    expect(screen.queryByLabelText("Changes")).toBeNull();
  });
});
