import { Alert, Badge, Button, Group, Loader, Select, Stack, Text, Title } from "@mantine/core";
import { lazy, Suspense, useState } from "react";
import { useParams } from "react-router";

import { ApiError, call, post } from "../api";
import type { Page } from "../api";
import { useAuth } from "../auth";
import { DataTable } from "../components/DataTable";
import { JsonDiff } from "../JsonDiff";
import { useFetched } from "../useFetched";
import type { Environment } from "./Environments";
import type { EditableRevision } from "./RevisionEditor";

interface Revision extends EditableRevision {
  deployedTo: string[];
}

interface Api {
  id: string;
  name: string;
  desc: string;
}

interface Outcome {
  ok: boolean;
  message: string;
  warnings: string[];
  /** a deploy refused because another revision is live there: force swaps it */
  conflict: boolean;
}

// the form generator and its validator come with the first revision edited
const RevisionEditor = lazy(() => import("./RevisionEditor"));

const specs = (revision: Revision) => ({
  serviceSpec: revision.serviceSpec,
  routeSpec: revision.routeSpec,
});

/** An API: its revisions (clone, compare two), and deploying one (dry run first; a revision
 * live there is explained, and replaced only when asked: that is also a rollback). */
export function ApiPage() {
  const { org, can } = useAuth();
  const { apiId } = useParams();
  const base = `/api/orgs/${org!.id}/apis/${apiId}`;
  const api = useFetched<Api>(base);
  const revisions = useFetched<Page<Revision>>(`${base}/revisions?size=100`);
  const envs = useFetched<Page<Environment>>(`/api/orgs/${org!.id}/envs?size=100`);
  const [failure, setFailure] = useState<string | null>(null);
  const [editingId, setEditingId] = useState<string | null>(null);

  if (api.error) return <Alert color="red">{api.error.message}</Alert>;
  if (!api.data || !revisions.data || !envs.data) return <Loader aria-label="Loading the API" />;
  const envName = (id: string) => envs.data!.items.find((e) => e.id === id)?.name ?? id;
  const items = [...revisions.data.items].sort((a, b) => b.number - a.number);
  const editing = items.find((r) => r.id === editingId);

  async function clone(revision: Revision) {
    setFailure(null);
    try {
      await post(`${base}/revisions/${revision.id}/clone`, {});
      revisions.reload();
    } catch (error) {
      setFailure(error instanceof Error ? error.message : String(error));
    }
  }

  return (
    <Stack>
      <Title order={2}>{api.data.name}</Title>
      {api.data.desc && <Text>{api.data.desc}</Text>}
      {failure && (
        <Alert color="red" role="alert">
          {failure}
        </Alert>
      )}
      <Title order={3}>Revisions</Title>
      <DataTable
        items={items}
        label="Revisions"
        empty="No revision yet."
        columns={["Revision", "Status", "Live in", "Routes", ""]}
        rowKey={(revision) => revision.id}
        row={(revision) => [
          revision.number,
          <Badge color={revision.status === "ACTIVE" ? "green" : "gray"}>{revision.status}</Badge>,
          revision.deployedTo.map(envName).join(", ") || "—",
          revision.routeSpec.length,
          <Button
            size="xs"
            variant="light"
            disabled={!can("api.update")}
            aria-label={`Clone revision ${revision.number}`}
            onClick={() => clone(revision)}
          >
            Clone
          </Button>,
        ]}
      />
      <Select
        label="Revision to edit"
        description="Its plugins and routes; a deployed revision is shown read-only"
        data={items.map((r) => ({ value: r.id, label: `Revision ${r.number} (${r.status})` }))}
        value={editingId}
        onChange={setEditingId}
        w={320}
      />
      {editing && (
        <Suspense fallback={<Loader aria-label="Loading the revision editor" />}>
          <RevisionEditor base={base} revision={editing} onSaved={revisions.reload} />
        </Suspense>
      )}
      <Compare revisions={items} />
      <Deploy
        base={base}
        revisions={items}
        environments={envs.data.items}
        allowed={can("api.deploy")}
        mayBind={can("api.update")}
        onDeployed={revisions.reload}
      />
    </Stack>
  );
}

function Compare({ revisions }: { revisions: Revision[] }) {
  const numbers = revisions.map((r) => ({ value: r.id, label: `Revision ${r.number}` }));
  const [left, setLeft] = useState<string | null>(revisions[1]?.id ?? null);
  const [right, setRight] = useState<string | null>(revisions[0]?.id ?? null);
  const from = revisions.find((r) => r.id === left);
  const to = revisions.find((r) => r.id === right);
  return (
    <Stack>
      <Title order={3}>Compare revisions</Title>
      <Group>
        <Select
          label="From"
          data={numbers}
          value={left}
          onChange={setLeft}
          w={180}
          allowDeselect={false}
        />
        <Select
          label="To"
          data={numbers}
          value={right}
          onChange={setRight}
          w={180}
          allowDeselect={false}
        />
      </Group>
      {from && to && <JsonDiff from={specs(from)} to={specs(to)} label="Differences" />}
    </Stack>
  );
}

function Deploy(props: {
  base: string;
  revisions: Revision[];
  environments: Environment[];
  allowed: boolean;
  mayBind: boolean;
  onDeployed: () => void;
}) {
  const [revisionId, setRevisionId] = useState<string | null>(props.revisions[0]?.id ?? null);
  const [envId, setEnvId] = useState<string | null>(props.environments[0]?.id ?? null);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [busy, setBusy] = useState(false);
  const revision = props.revisions.find((r) => r.id === revisionId);

  async function run(action: "dry-run" | "deploy", force = false) {
    setBusy(true);
    setOutcome(null);
    const path = `${props.base}/revisions/${revisionId}/${action === "dry-run" ? "deploy/dry-run" : "deploy"}`;
    const body = action === "deploy" ? { environmentId: envId, force } : { environmentId: envId };
    try {
      const done = await post<{ message: string; warnings: string[] }>(path, body);
      setOutcome({ ok: true, message: done.message, warnings: done.warnings, conflict: false });
      if (action === "deploy") props.onDeployed();
    } catch (error) {
      const conflict =
        error instanceof ApiError &&
        error.status === 409 &&
        /already has revision/.test(error.message);
      const message = error instanceof Error ? error.message : String(error);
      setOutcome({ ok: false, message, warnings: [], conflict });
    } finally {
      setBusy(false);
    }
  }

  return (
    <Stack>
      <Title order={3}>Deploy</Title>
      {!props.allowed && <Text c="dimmed">Deploying needs the api.deploy permission.</Text>}
      <Group align="end">
        <Select
          label="Revision"
          data={props.revisions.map((r) => ({ value: r.id, label: `Revision ${r.number}` }))}
          value={revisionId}
          onChange={setRevisionId}
          allowDeselect={false}
          w={180}
        />
        <Select
          label="Target environment"
          data={props.environments.map((e) => ({ value: e.id, label: e.name }))}
          value={envId}
          onChange={setEnvId}
          allowDeselect={false}
          w={220}
        />
        {revision && envId && (
          <Binding
            key={`${revision.id}-${envId}`}
            base={props.base}
            revision={revision}
            envId={envId}
            allowed={props.mayBind}
            onBound={props.onDeployed}
          />
        )}
        <Button
          variant="default"
          disabled={!props.allowed || !envId}
          loading={busy}
          onClick={() => run("dry-run")}
        >
          Dry run
        </Button>
        <Button disabled={!props.allowed || !envId} loading={busy} onClick={() => run("deploy")}>
          Deploy
        </Button>
      </Group>
      {outcome && (
        <Alert color={outcome.ok ? "green" : "red"} role="status" aria-label="Deploy outcome">
          <Text>{outcome.message}</Text>
          {outcome.warnings.map((warning) => (
            <Text key={warning} c="orange">
              Warning: {warning}
            </Text>
          ))}
          {outcome.conflict && (
            <Stack mt="sm">
              <Text>
                Another revision of this API is live in that environment. Deploying with force
                replaces it at once (the way to roll back to an older revision too).
              </Text>
              <Button color="orange" onClick={() => run("deploy", true)}>
                Deploy with force
              </Button>
            </Stack>
          )}
        </Alert>
      )}
    </Stack>
  );
}

/** The upstream a revision's routes go to in an environment (a deploy needs one): chosen
 * among the environment's upstreams, fixed while the revision is live there. */
function Binding(props: {
  base: string;
  revision: Revision;
  envId: string;
  allowed: boolean;
  onBound: () => void;
}) {
  const { org } = useAuth();
  const upstreams = useFetched<Page<{ id: string; name: string }>>(
    `/api/orgs/${org!.id}/envs/${props.envId}/upstreams?size=100`,
  );
  const bound = props.revision.upstreamBindings.find((b) => b.environmentId === props.envId);
  const live = props.revision.deployedTo.includes(props.envId);
  const [failure, setFailure] = useState<string | null>(null);

  async function bind(upstreamId: string | null) {
    if (!upstreamId) return;
    setFailure(null);
    try {
      await call("PATCH", `${props.base}/revisions/${props.revision.id}/upstream-bindings/add`, {
        environmentUpstreams: [{ environmentId: props.envId, upstreamId }],
      });
      props.onBound();
    } catch (error) {
      setFailure(error instanceof Error ? error.message : String(error));
    }
  }

  return (
    <Select
      label="Upstream"
      description={live ? "Fixed while the revision is live here" : undefined}
      placeholder={upstreams.data?.items.length === 0 ? "No upstream here" : "Choose"}
      data={(upstreams.data?.items ?? []).map((u) => ({ value: u.id, label: u.name }))}
      value={bound?.upstreamId ?? null}
      onChange={bind}
      disabled={!props.allowed || live}
      error={failure}
      allowDeselect={false}
      w={220}
    />
  );
}
