import { Alert, Badge, Loader, Stack, Table, Text, Title } from "@mantine/core";
import { useEffect } from "react";
import { useParams } from "react-router";

import { useAuth } from "../auth";
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
      {env.data.deployments.length === 0 ? (
        <Text>Nothing is deployed here yet.</Text>
      ) : (
        <Table aria-label="Deployed APIs">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>API</Table.Th>
              <Table.Th>Revision</Table.Th>
              <Table.Th>Deployed</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {env.data.deployments.map((d) => (
              <Table.Tr key={d.apiId}>
                <Table.Td>{d.apiName}</Table.Td>
                <Table.Td>{d.revisionNumber}</Table.Td>
                <Table.Td>{when(d.deployedAt)}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      <Title order={3}>Data-plane nodes</Title>
      {nodes.error && <Alert color="red">{nodes.error.message}</Alert>}
      {nodes.data && nodes.data.items.length === 0 && (
        <Text>No gateway node has reported to this environment yet.</Text>
      )}
      {nodes.data && nodes.data.items.length > 0 && (
        <Table aria-label="Data-plane nodes">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Node</Table.Th>
              <Table.Th>Address</Table.Th>
              <Table.Th>Runs version</Table.Th>
              <Table.Th>Expected</Table.Th>
              <Table.Th>Last heartbeat</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {nodes.data.items.map((node) => (
              <Table.Tr key={node.nodeId}>
                <Table.Td>{node.nodeId}</Table.Td>
                <Table.Td>{node.address ?? "—"}</Table.Td>
                <Table.Td>
                  {node.configVersion}{" "}
                  <Badge color={node.inSync ? "green" : "orange"}>
                    {node.inSync ? "in sync" : "behind"}
                  </Badge>
                </Table.Td>
                <Table.Td>{node.expectedVersion}</Table.Td>
                <Table.Td>{when(node.lastSeenAt)}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </Stack>
  );
}
