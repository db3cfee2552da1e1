import { Alert, Loader, Stack } from "@mantine/core";

import { put } from "../api";
import { useAuth } from "../auth";
import { PluginsForm, usePluginSchemas } from "../components/PluginsForm";
import type { Plugins } from "../components/PluginsForm";
import RouteEditor from "./RouteEditor";
import type { RouteSpec } from "./RouteEditor";

export interface EditableRevision {
  id: string;
  number: number;
  status: "ACTIVE" | "INACTIVE";
  serviceSpec: Record<string, unknown> & { plugins?: Plugins };
  routeSpec: RouteSpec[];
  upstreamBindings: { environmentId: string; upstreamId: string }[];
}

/**
 * What an undeployed revision holds, edited: its service-level plugins (saved into its
 * serviceSpec) and its routes with their own plugins (its routeSpec), each plugin through
 * the form generated from its JSON Schema. A deployed revision is read-only: clone first.
 * Loaded with the first revision edited (the form generator and its validator are large).
 */
export default function RevisionEditor(props: {
  base: string;
  revision: EditableRevision;
  onSaved: () => void;
}) {
  const { can } = useAuth();
  const schemas = usePluginSchemas();
  const { revision } = props;
  const editable = revision.status === "INACTIVE" && can("api.update");
  const readOnlyReason =
    revision.status === "ACTIVE"
      ? "A deployed revision is read-only: clone it to change it."
      : "Changing a revision needs the api.update permission.";
  if (schemas.error) return <Alert color="red">{schemas.error.message}</Alert>;
  if (!schemas.data) return <Loader aria-label="Loading the plugin schemas" />;
  return (
    <Stack gap="xl">
      <PluginsForm
        title={`Plugins of revision ${revision.number}`}
        schemas={schemas.data.items}
        plugins={revision.serviceSpec.plugins ?? {}}
        editable={editable}
        readOnlyReason={readOnlyReason}
        onSave={async (plugins) => {
          await put(`${props.base}/revisions/${revision.id}/service-spec`, {
            serviceSpec: { ...revision.serviceSpec, plugins },
          });
          props.onSaved();
        }}
      />
      <RouteEditor
        base={props.base}
        revision={revision}
        schemas={schemas.data.items}
        editable={editable}
        readOnlyReason={readOnlyReason}
        onSaved={props.onSaved}
      />
    </Stack>
  );
}
