import { Alert, Badge, Button, Group, Select, Stack, Text, Title } from "@mantine/core";
import { Form } from "@rjsf/mantine";
import type { RJSFSchema, UiSchema } from "@rjsf/utils";
import validator from "@rjsf/validator-ajv8";
import { useState } from "react";

import type { Page } from "../api";
import { useAuth } from "../auth";
import { useFetched } from "../useFetched";

export interface PluginSchema {
  name: string;
  category: string;
  description: string;
  schema: RJSFSchema;
}

export type Plugins = Record<string, unknown>;

// attachment settings are not part of a plugin's own form
const UI: UiSchema = {
  _meta: { "ui:widget": "hidden" },
  "ui:submitButtonOptions": { submitText: "Save plugin" },
};

/** The plugins the gateway runs, with the JSON Schema of each (/plugin-schemas). */
export function usePluginSchemas() {
  const { org } = useAuth();
  return useFetched<Page<PluginSchema>>(`/api/orgs/${org!.id}/plugin-schemas?size=100`);
}

/**
 * A set of plugins (a service's, a route's): each plugin's form is generated from the JSON
 * Schema the gateway publishes, checked as it is filled (errors at the field, before
 * anything is sent), and handed to ``onSave`` with the others. ``onSave`` may refuse (its
 * message is shown); read-only sets say why.
 */
export function PluginsForm(props: {
  title: string;
  schemas: PluginSchema[];
  plugins: Plugins;
  editable: boolean;
  readOnlyReason?: string;
  onSave: (next: Plugins) => Promise<void>;
}) {
  const [editing, setEditing] = useState<string | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const { plugins } = props;

  async function save(next: Plugins) {
    setFailure(null);
    try {
      await props.onSave(next);
      setEditing(null);
    } catch (error) {
      setFailure(error instanceof Error ? error.message : String(error));
    }
  }

  const schema = props.schemas.find((s) => s.name === editing);
  return (
    <Stack gap="xs">
      <Title order={4}>{props.title}</Title>
      {!props.editable && props.readOnlyReason && <Text c="dimmed">{props.readOnlyReason}</Text>}
      {failure && (
        <Alert color="red" role="alert">
          {failure}
        </Alert>
      )}
      {Object.keys(plugins).length === 0 && <Text size="sm">No plugin.</Text>}
      {Object.entries(plugins).map(([name, config]) => (
        <Group key={name}>
          <Badge variant="light">{name}</Badge>
          <Text size="sm" ff="monospace">
            {JSON.stringify(config)}
          </Text>
          {props.editable && (
            <>
              <Button
                size="xs"
                variant="subtle"
                aria-label={`Edit ${name}`}
                onClick={() => setEditing(name)}
              >
                Edit
              </Button>
              <Button
                size="xs"
                variant="subtle"
                color="red"
                aria-label={`Remove ${name}`}
                onClick={() =>
                  save(Object.fromEntries(Object.entries(plugins).filter(([n]) => n !== name)))
                }
              >
                Remove
              </Button>
            </>
          )}
        </Group>
      ))}
      {props.editable && (
        <Select
          label="Add plugin"
          placeholder="Choose a plugin"
          searchable
          data={props.schemas.filter((s) => !(s.name in plugins)).map((s) => s.name)}
          value={null}
          onChange={(name) => name && setEditing(name)}
        />
      )}
      {schema && (
        <Stack role="region" aria-label={`${schema.name} configuration`}>
          <Text size="sm">{schema.description}</Text>
          <Form
            schema={schema.schema}
            uiSchema={UI}
            validator={validator}
            formData={plugins[schema.name] ?? {}}
            liveValidate="onBlur"
            showErrorList={false}
            onSubmit={({ formData }) => save({ ...plugins, [schema.name]: formData ?? {} })}
          />
          <Button variant="default" onClick={() => setEditing(null)}>
            Cancel
          </Button>
        </Stack>
      )}
    </Stack>
  );
}
