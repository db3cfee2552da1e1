import { MantineProvider } from "@mantine/core";
import { render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";

import { PluginsForm } from "./PluginsForm";
import type { PluginSchema, Plugins } from "./PluginsForm";

// as /plugin-schemas publishes them: JSON Schemas of the plugins' configurations
const SCHEMAS: PluginSchema[] = [
  {
    name: "limit-count",
    category: "traffic",
    description: "At most count requests per time_window seconds.",
    schema: {
      type: "object",
      properties: {
        count: { type: "integer", exclusiveMinimum: 0, title: "Count" },
        time_window: { type: "integer", exclusiveMinimum: 0, title: "Time Window" },
        _meta: { type: "object", title: "Meta" },
      },
      required: ["count", "time_window"],
      additionalProperties: false,
    },
  },
  {
    name: "cors",
    category: "security",
    description: "Cross-origin requests.",
    schema: { type: "object", properties: { allow_origins: { type: "string", title: "Origins" } } },
  },
];

function show(props: {
  plugins?: Plugins;
  editable?: boolean;
  onSave?: (p: Plugins) => Promise<void>;
}) {
  const onSave = vi.fn(props.onSave ?? (async () => {}));
  render(
    <MantineProvider env="test">
      <PluginsForm
        title="Route plugins"
        schemas={SCHEMAS}
        plugins={props.plugins ?? {}}
        editable={props.editable ?? true}
        readOnlyReason="A deployed revision is read-only: clone it to change it."
        onSave={onSave}
      />
    </MantineProvider>,
  );
  return onSave;
}

async function choose(user: ReturnType<typeof userEvent.setup>, plugin: string) {
  await user.click(screen.getByRole("combobox", { name: "Add plugin" }));
  await user.click(screen.getByRole("option", { name: plugin }));
  return screen.getByRole("region", { name: `${plugin} configuration` });
}

describe("PluginsForm", () => {
  it("generates a plugin's form from its schema and refuses a bad value at its field", async () => {
    const user = userEvent.setup({ delay: null });
    const onSave = show({ plugins: { cors: { allow_origins: "*" } } });
    const form = await choose(user, "limit-count");
    expect(within(form).queryByLabelText("Meta")).toBeNull(); // attachment settings hidden

    await user.type(within(form).getByLabelText(/^Count/), "0");
    await user.type(within(form).getByLabelText(/^Time Window/), "60");
    await user.click(within(form).getByRole("button", { name: "Save plugin" }));
    // the error is the Count field's, and nothing was sent
    await waitFor(() =>
      expect(within(form).getByLabelText(/^Count/)).toHaveAttribute("aria-invalid", "true"),
    );
    expect(within(form).getAllByText(/must be > 0/).length).toBeGreaterThan(0);
    expect(within(form).getByLabelText(/^Time Window/)).not.toHaveAttribute("aria-invalid", "true");
    expect(onSave).not.toHaveBeenCalled();

    await user.clear(within(form).getByLabelText(/^Count/));
    await user.type(within(form).getByLabelText(/^Count/), "5");
    await user.click(within(form).getByRole("button", { name: "Save plugin" }));
    await waitFor(() =>
      expect(onSave).toHaveBeenCalledWith({
        cors: { allow_origins: "*" },
        "limit-count": { count: 5, time_window: 60 },
      }),
    );
    // saved: the form closes
    await waitFor(() => expect(screen.queryByRole("region", { name: /configuration/ })).toBeNull());
  });

  it("offers only the plugins not attached yet, and removes one", async () => {
    const user = userEvent.setup({ delay: null });
    const onSave = show({ plugins: { cors: {}, "limit-count": { count: 1, time_window: 1 } } });
    await user.click(screen.getByRole("combobox", { name: "Add plugin" }));
    expect(screen.queryByRole("option", { name: "cors" })).toBeNull();
    await user.click(screen.getByRole("button", { name: "Remove cors" }));
    expect(onSave).toHaveBeenCalledWith({ "limit-count": { count: 1, time_window: 1 } });
  });

  it("shows a refusal of the save, and keeps the form open", async () => {
    const user = userEvent.setup({ delay: null });
    show({
      onSave: async () => {
        throw new Error("failed to check the configuration of plugin cors: bad origin");
      },
    });
    const form = await choose(user, "cors");
    await user.type(within(form).getByLabelText(/^Origins/), "nowhere");
    await user.click(within(form).getByRole("button", { name: "Save plugin" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("bad origin");
    expect(screen.getByRole("region", { name: "cors configuration" })).toBeInTheDocument();
  });

  it("is read-only with the reason, for a deployed revision", () => {
    show({ plugins: { cors: {} }, editable: false });
    expect(screen.getByText(/read-only: clone it/)).toBeInTheDocument();
    expect(screen.queryByRole("button", { name: "Edit cors" })).toBeNull();
    expect(screen.queryByRole("combobox", { name: "Add plugin" })).toBeNull();
  });
});
