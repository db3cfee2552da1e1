import { Alert, Badge, Button, Group, Select, Stack, Text, Title, Tooltip } from "@mantine/core";
import { useEffect, useState } from "react";

import type { Page } from "../api";
import { useAuth } from "../auth";
import { Badges, FetchedTable } from "../components/DataTable";
import type { Environment } from "./Environments";
import { useFetched } from "../useFetched";
import { AddUpstream } from "./AddUpstream";
import { describe, reporting, summarize } from "./upstreamHealth";
import type { UpstreamHealth } from "./upstreamHealth";

/** How often the page asks again for the nodes' view (they report within a second of a
 * change, and every 10 s) */
const HEALTH_REFRESH_MS = 3000;
const COLOURS = { healthy: "green", unhealthy: "red", mixed: "orange" } as const;

export interface UpstreamNode {
  host: string;
  port: number;
  weight: number;
}

interface Upstream {
  id: string;
  name: string;
  description: string;
  specification: {
    type: string;
    nodes?: UpstreamNode[];
    discovery?: { type: string; serviceName: string };
    checks?: { active?: unknown; passive?: unknown };
  };
}

export function UpstreamsPage() {
  const { org, can } = useAuth();
  const envs = useFetched<Page<Environment>>(`/api/orgs/${org!.id}/envs?size=100`);
  const [chosen, setChosen] = useState<string | null>(null);
  const envId = chosen ?? envs.data?.items[0]?.id ?? null;
  const [adding, setAdding] = useState(false);
  const allowed = can("upstream.manage");
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>Upstreams</Title>
        <Button onClick={() => setAdding(true)} disabled={!allowed}>
          Add Upstream
        </Button>
      </Group>
      {!allowed && <Text c="dimmed">Adding an upstream needs the upstream.manage permission.</Text>}
      {envs.error && <Alert color="red">{envs.error.message}</Alert>}
      {envs.data && envs.data.items.length === 0 && <Text>Create an environment first.</Text>}
      {envs.data && envs.data.items.length > 0 && (
        <Select
          label="Environment"
          data={envs.data.items.map((e) => ({ value: e.id, label: e.name }))}
          value={envId}
          onChange={setChosen}
          allowDeselect={false}
          w={260}
        />
      )}
      {envId && <UpstreamTable key={`${envId}-${adding}`} orgId={org!.id} envId={envId} />}
      {envs.data && (
        <AddUpstream
          opened={adding}
          environments={envs.data.items}
          onClose={() => setAdding(false)}
          onAdded={(created) => {
            setChosen(created);
            setAdding(false);
          }}
        />
      )}
    </Stack>
  );
}

function UpstreamTable({ orgId, envId }: { orgId: string; envId: string }) {
  const upstreams = useFetched<Page<Upstream>>(
    `/api/orgs/${orgId}/envs/${envId}/upstreams?size=100`,
  );
  return (
    <FetchedTable
      fetched={upstreams}
      label="Upstreams"
      empty="No upstream in this environment yet: Add Upstream names the servers its APIs send traffic to."
      columns={["Name", "Targets", "Balancing", "Health checks", "Live health"]}
      rowKey={(u) => u.id}
      row={(u) => [
        u.name,
        <Badges
          values={
            u.specification.discovery
              ? [`${u.specification.discovery.type}: ${u.specification.discovery.serviceName}`]
              : (u.specification.nodes ?? []).map((n) => `${n.host}:${n.port} × ${n.weight}`)
          }
        />,
        u.specification.type,
        [u.specification.checks?.active && "active", u.specification.checks?.passive && "passive"]
          .filter(Boolean)
          .join(" + ") || "none",
        <LiveHealth
          path={`/api/orgs/${orgId}/envs/${envId}/upstreams/${u.id}/health`}
          name={u.name}
        />,
      ]}
    />
  );
}

/** Each target as the environment's gateway nodes see it now, followed live. */
function LiveHealth({ path, name }: { path: string; name: string }) {
  const health = useFetched<UpstreamHealth>(path);
  useEffect(() => {
    const timer = setInterval(health.reload, HEALTH_REFRESH_MS);
    return () => clearInterval(timer);
  }, [health.reload]);
  let body;
  if (health.error) body = <Text c="red">{health.error.message}</Text>;
  else if (!health.data) body = <Text c="dimmed">…</Text>;
  else if (reporting(health.data) === 0) body = <Text c="dimmed">No gateway node runs it yet</Text>;
  else
    body = (
      <Group gap={4}>
        {summarize(health.data).map((target) => (
          <Tooltip
            key={target.target}
            label={target.lastProbe ? `last probe: ${target.lastProbe}` : "not probed"}
          >
            <Badge color={COLOURS[target.state]} variant="light" tt="none">
              {describe(target)}
            </Badge>
          </Tooltip>
        ))}
      </Group>
    );
  return (
    <div role="status" aria-label={`Health of ${name}`}>
      {body}
    </div>
  );
}
