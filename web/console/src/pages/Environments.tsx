import { Alert, Anchor, Badge, Group, Loader, Table, Title } from "@mantine/core";
import { Link } from "react-router";

import type { Page } from "../api";
import { useAuth } from "../auth";
import { useFetched } from "../useFetched";

export interface Environment {
  id: string;
  name: string;
  description: string;
  gatewayHosts: string[];
}

export function EnvironmentsPage() {
  const { org } = useAuth();
  const envs = useFetched<Page<Environment>>(`/api/orgs/${org!.id}/envs?size=100`);
  return (
    <>
      <Title order={2} mb="md">
        Environments
      </Title>
      {envs.error && <Alert color="red">{envs.error.message}</Alert>}
      {envs.loading && <Loader aria-label="Loading environments" />}
      {envs.data && (
        <Table aria-label="Environments" striped>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Gateway hosts</Table.Th>
              <Table.Th>Description</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {envs.data.items.map((env) => (
              <Table.Tr key={env.id}>
                <Table.Td>
                  <Anchor component={Link} to={`/environments/${env.id}`}>
                    {env.name}
                  </Anchor>
                </Table.Td>
                <Table.Td>
                  <Group gap={4}>
                    {env.gatewayHosts.map((host) => (
                      <Badge key={host} variant="light">
                        {host}
                      </Badge>
                    ))}
                  </Group>
                </Table.Td>
                <Table.Td>{env.description}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      {envs.data && envs.data.items.length === 0 && <p>No environment yet.</p>}
    </>
  );
}
