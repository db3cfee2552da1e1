import {
  Badge,
  Button,
  Group,
  Modal,
  MultiSelect,
  Stack,
  Text,
  TextInput,
  Textarea,
  Title,
} from "@mantine/core";
import { useState } from "react";

import { ApiError, put } from "../api";
import { DataTable } from "../components/DataTable";
import { PluginsForm } from "../components/PluginsForm";
import type { PluginSchema, Plugins } from "../components/PluginsForm";
import { Failure } from "../useSubmission";

/** One entry of a revision's routeSpec (the fields the editor does not show are kept). */
export interface RouteSpec {
  name?: string;
  uri: string;
  methods?: string[];
  plugins: Plugins;
  script?: string;
  service_id?: string;
  [field: string]: unknown;
}

export const METHODS = [
  "GET",
  "POST",
  "PUT",
  "PATCH",
  "DELETE",
  "HEAD",
  "OPTIONS",
  "CONNECT",
  "TRACE",
  "PURGE",
];

/** The route as the editor's fields left it: optional fields left empty are absent (the
 * seed's rules: a script of at least 10 characters or none, never an empty service_id). */
export function routeOf(
  original: Partial<RouteSpec>,
  fields: {
    name: string;
    uri: string;
    methods: string[];
    script: string;
    serviceId: string;
    plugins: Plugins;
  },
): RouteSpec {
  const route: RouteSpec = { ...original, uri: fields.uri, plugins: fields.plugins };
  const optional: [string, unknown][] = [
    ["name", fields.name.trim() || undefined],
    ["methods", fields.methods.length ? fields.methods : undefined],
    ["script", fields.script || undefined],
    ["service_id", fields.serviceId || undefined],
  ];
  for (const [key, value] of optional) {
    if (value === undefined) delete route[key];
    else route[key] = value;
  }
  return route;
}

/** The API's field errors of route ``index`` (``/routeSpec/3/uri`` → ``uri``); the others. */
export function routeErrors(errors: Record<string, string>, index: number) {
  const prefix = `/routeSpec/${index}/`;
  const mine: Record<string, string> = {};
  const others: string[] = [];
  for (const [pointer, detail] of Object.entries(errors)) {
    const field = pointer.startsWith(prefix) ? pointer.slice(prefix.length).split("/")[0] : null;
    if (field) mine[field] = mine[field] ?? detail;
    else others.push(detail);
  }
  return { mine, others };
}

/**
 * A revision's routes: each route's name, URI, methods, script, service id and its own
 * plugins (the forms generated from the plugins' schemas). Saved as the revision's whole
 * routeSpec; the API's refusal of a field is shown at that field.
 */
export default function RouteEditor(props: {
  base: string;
  revision: { id: string; number: number; status: string; routeSpec: RouteSpec[] };
  schemas: PluginSchema[];
  editable: boolean;
  readOnlyReason: string;
  onSaved: () => void;
}) {
  const routes = props.revision.routeSpec;
  // the index edited (routes.length: a new route), or null
  const [editing, setEditing] = useState<number | null>(null);
  const [failure, setFailure] = useState<string | null>(null);

  async function saveAll(next: RouteSpec[]) {
    await put(`${props.base}/revisions/${props.revision.id}/route-spec`, { routeSpec: next });
    props.onSaved();
  }

  async function remove(index: number) {
    setFailure(null);
    try {
      await saveAll(routes.filter((_, i) => i !== index));
    } catch (error) {
      setFailure(error instanceof Error ? error.message : String(error));
    }
  }

  return (
    <Stack gap="xs">
      <Group justify="space-between">
        <Title order={3}>Routes of revision {props.revision.number}</Title>
        <Button
          variant="light"
          disabled={!props.editable}
          onClick={() => setEditing(routes.length)}
        >
          Add route
        </Button>
      </Group>
      {!props.editable && <Text c="dimmed">{props.readOnlyReason}</Text>}
      <Failure message={failure} />
      <DataTable
        items={routes.map((route, index) => ({ route, index }))}
        label={`Routes of revision ${props.revision.number}`}
        empty="No route yet."
        columns={["Name", "URI", "Methods", "Plugins", ""]}
        rowKey={({ index }) => String(index)}
        row={({ route, index }) => [
          route.name ?? "—",
          <Text ff="monospace" size="sm">
            {route.uri}
          </Text>,
          (route.methods ?? []).join(", ") || "any",
          <Group gap={4}>
            {Object.keys(route.plugins ?? {}).map((name) => (
              <Badge key={name} variant="light">
                {name}
              </Badge>
            ))}
          </Group>,
          props.editable && (
            <Group gap={4}>
              <Button
                size="xs"
                variant="subtle"
                aria-label={`Edit route ${route.name ?? route.uri}`}
                onClick={() => setEditing(index)}
              >
                Edit
              </Button>
              <Button
                size="xs"
                variant="subtle"
                color="red"
                aria-label={`Remove route ${route.name ?? route.uri}`}
                onClick={() => remove(index)}
              >
                Remove
              </Button>
            </Group>
          ),
        ]}
      />
      {editing !== null && (
        <RouteForm
          index={editing}
          original={routes[editing] ?? { uri: "", plugins: {} }}
          schemas={props.schemas}
          onClose={() => setEditing(null)}
          onSave={async (route) => {
            const next = [...routes];
            next[editing] = route;
            await saveAll(next);
            setEditing(null);
          }}
        />
      )}
    </Stack>
  );
}

function RouteForm(props: {
  index: number;
  original: Partial<RouteSpec>;
  schemas: PluginSchema[];
  onClose: () => void;
  onSave: (route: RouteSpec) => Promise<void>;
}) {
  const { original } = props;
  const [name, setName] = useState(original.name ?? "");
  const [uri, setUri] = useState(original.uri ?? "");
  const [methods, setMethods] = useState<string[]>(original.methods ?? []);
  const [script, setScript] = useState(original.script ?? "");
  const [serviceId, setServiceId] = useState(original.service_id ?? "");
  const [plugins, setPlugins] = useState<Plugins>(original.plugins ?? {});
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [failure, setFailure] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const title = original.uri ? "Edit route" : "Add route";

  async function save() {
    setBusy(true);
    setErrors({});
    setFailure(null);
    try {
      await props.onSave(routeOf(original, { name, uri, methods, script, serviceId, plugins }));
    } catch (error) {
      const found = routeErrors(error instanceof ApiError ? error.fieldErrors() : {}, props.index);
      setErrors(found.mine);
      const rest = found.others.join("; ");
      const shown = Object.keys(found.mine).length > 0;
      setFailure(rest || (shown ? null : error instanceof Error ? error.message : String(error)));
    } finally {
      setBusy(false);
    }
  }

  return (
    <Modal opened onClose={props.onClose} title={title} size="xl">
      <Stack>
        <Failure message={failure} />
        <TextInput
          label="Name"
          value={name}
          error={errors.name}
          onChange={(e) => setName(e.currentTarget.value)}
        />
        <TextInput
          label="URI"
          description="A path; ':name' segments are parameters, a final '*' matches a prefix"
          required
          value={uri}
          error={errors.uri}
          onChange={(e) => setUri(e.currentTarget.value)}
        />
        <MultiSelect
          label="Methods"
          description="None chosen: every method"
          data={METHODS}
          value={methods}
          error={errors.methods}
          onChange={setMethods}
        />
        <Textarea
          label="Script"
          description="Optional; at least 10 characters when given"
          value={script}
          error={errors.script}
          onChange={(e) => setScript(e.currentTarget.value)}
        />
        <TextInput
          label="Service id"
          description="Optional"
          value={serviceId}
          error={errors.service_id}
          onChange={(e) => setServiceId(e.currentTarget.value)}
        />
        <PluginsForm
          title="Route plugins"
          schemas={props.schemas}
          plugins={plugins}
          editable
          onSave={async (next) => setPlugins(next)}
        />
        {errors.plugins && <Text c="red">{errors.plugins}</Text>}
        <Group justify="flex-end">
          <Button variant="default" onClick={props.onClose}>
            Cancel
          </Button>
          <Button onClick={save} loading={busy}>
            Save route
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
