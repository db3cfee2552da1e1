import { Alert, Badge, Button, Group, Select, Stack, Text, Title } from "@mantine/core";
import { Form } from "@rjsf/mantine";
import type { RJSFSchema, UiSchema } from "@rjsf/utils";
import validator from "@rjsf/validator-ajv8";
import { useState } from "react";

import { ApiError, call } from "../api";
import type { Page } from "../api";
import { useAuth } from "../auth";
import { useFetched } from "../useFetched";

interface PluginSchema {
  name: string;
  category: string;
  description: string;
  schema: RJSFSchema;
}

export interface EditableRevision {
  id: string;
  number: number;
  status: "ACTIVE" | "INACTIVE";
  serviceSpec: Record<string, unknown> & { plugins?: Record<string, unknown> };
}

// attachment settings are not part of a plugin's own form
const UI: UiSchema = {
  _meta: { "ui:widget": "hidden" },
  "ui:submitButtonOptions": { submitText: "Save plugin" },
};

/**
 * A revision's service-level plugins: each plugin's form is generated from the JSON Schema
 * the gateway publishes (/plugin-schemas), checked as it is filled (errors at the field),
 * and saved into the revision's serviceSpec. Deployed revisions are read-only: clone first.
 */
export default function PluginEditor(props: {
  base: string;
  revision: EditableRevision;
  onSaved: () => void;
}) {
  const { org, can } = useAuth();
  const schemas = useFetched<Page<PluginSchema>>(`/api/orgs/${org!.id}/plugin-schemas?size=100`);
  const [editing, setEditing] = useState<string | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const plugins = props.revision.serviceSpec.plugins ?? {};
  const editable = props.revision.status === "INACTIVE" && can("api.update");

  async function save(next: Record<string, unknown>) {
    setFailure(null);
    try {
      await call("PUT", `${props.base}/revisions/${props.revision.id}/service-spec`, {
        serviceSpec: { ...props.revision.serviceSpec, plugins: next },
      });
      setEditing(null);
      props.onSaved();
    } catch (error) {
      setFailure(error instanceof ApiError ? error.message : String(error));
    }
  }

  const schema = schemas.data?.items.find((s) => s.name === editing);
  return (
    <Stack>
      <Title order={3}>Plugins of revision {props.revision.number}</Title>
      {!editable && (
        <Text c="dimmed">
          {props.revision.status === "ACTIVE"
            ? "A deployed revision is read-only: clone it to change its plugins."
            : "Changing plugins needs the api.update permission."}
        </Text>
      )}
      {failure && (
        <Alert color="red" role="alert">
          {failure}
        </Alert>
      )}
      {Object.keys(plugins).length === 0 && <Text>No service-level plugin.</Text>}
      {Object.entries(plugins).map(([name, config]) => (
        <Group key={name}>
          <Badge variant="light">{name}</Badge>
          <Text size="sm" ff="monospace">
            {JSON.stringify(config)}
          </Text>
          {editable && (
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
      {editable && schemas.data && (
        <Select
          label="Add plugin"
          placeholder="Choose a plugin"
          searchable
          data={schemas.data.items.filter((s) => !(s.name in plugins)).map((s) => s.name)}
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
