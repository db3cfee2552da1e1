import { Alert, Badge, Loader, Stack, Text, Title } from "@mantine/core";
import { useEffect } from "react";
import { useParams } from "react-router";

import { useAuth } from "../auth";
import { DataTable, FetchedTable } from "../components/DataTable";
import { useFetched } from "../useFetched";
import type { Environment } from "./Environments";

interface Deployed {
  apiId: string;
  apiName: string;
  revisionNumber: number;
  deployedAt: string;
}

interface EnvironmentDetail extends Environment {
  configVersion: number;
  deployments: Deployed[];
}

interface DataPlaneNode {
  nodeId: string;
  configVersion: number;
  expectedVersion: number;
  inSync: boolean;
  address: string | null;
  lastSeenAt: string;
}

const when = (iso: string) => new Date(iso).toLocaleString();

export function EnvironmentPage() {
  const { org } = useAuth();
  const { envId } = useParams();
  const base = `/api/orgs/${org!.id}/envs/${envId}`;
  const env = useFetched<EnvironmentDetail>(base);
  const nodes = useFetched<{ items: DataPlaneNode[]; expectedVersion: number }>(`${base}/nodes`);
  // nodes report every 10 s: the view follows them
  useEffect(() => {
    const timer = setInterval(nodes.reload, 5000);
    return () => clearInterval(timer);
  }, [nodes.reload]);
  if (env.error) return <Alert color="red">{env.error.message}</Alert>;
  if (!env.data) return <Loader aria-label="Loading the environment" />;
  return (
    <Stack>
      <Title order={2}>{env.data.name}</Title>
      <Text>
        Gateway hosts: {env.data.gatewayHosts.join(", ") || "none"} · config version{" "}
        {env.data.configVersion}
      </Text>
      <Title order={3}>Deployed APIs</Title>
      <DataTable
        items={env.data.deployments}
        label="Deployed APIs"
        empty="Nothing is deployed here yet."
        columns={["API", "Revision", "Deployed"]}
        rowKey={(d) => d.apiId}
        row={(d) => [d.apiName, d.revisionNumber, when(d.deployedAt)]}
      />
      <Title order={3}>Data-plane nodes</Title>
      <FetchedTable
        fetched={nodes}
        label="Data-plane nodes"
        empty="No gateway node has reported to this environment yet."
        columns={["Node", "Address", "Runs version", "Expected", "Last heartbeat"]}
        rowKey={(node) => node.nodeId}
        row={(node) => [
          node.nodeId,
          node.address ?? "—",
          <>
            {node.configVersion}{" "}
            <Badge color={node.inSync ? "green" : "orange"}>
              {node.inSync ? "in sync" : "behind"}
            </Badge>
          </>,
          node.expectedVersion,
          when(node.lastSeenAt),
        ]}
      />
    </Stack>
  );
}
