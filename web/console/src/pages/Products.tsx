import { Alert, Badge, Group, Loader, Stack, Table, Text, Title } from "@mantine/core";

import type { Page } from "../api";
import { useAuth } from "../auth";
import { useFetched } from "../useFetched";
import type { Environment } from "./Environments";

interface Quota {
  limit: number;
  interval: number;
  interval_unit: string;
  key_scope: string;
}

interface Product {
  id: string;
  name: string;
  displayName: string;
  description: string;
  apiIds: string[];
  quota: Quota | null;
  environments: string[];
}

interface Developer {
  id: string;
  firstName: string;
  lastName: string;
  email: string;
  status: string;
  appCount: number;
}

interface ApiName {
  id: string;
  name: string;
}

/** The quota as the gateway enforces it: "1,000 per 1 day, per app"; -1 is unlimited. */
export function quotaText(quota: Quota | null): string {
  if (!quota) return "no quota of its own";
  if (quota.limit === -1) return "unlimited";
  const unit =
    quota.interval === 1 ? quota.interval_unit : `${quota.interval} ${quota.interval_unit}s`;
  return `${quota.limit.toLocaleString("en")} per ${unit}, per ${quota.key_scope}`;
}

/** What is sold (products, their APIs and quotas) and to whom (developers, their apps). */
export function ProductsPage() {
  const { org } = useAuth();
  const base = `/api/orgs/${org!.id}`;
  const products = useFetched<Page<Product>>(`${base}/products?size=100`);
  const developers = useFetched<Page<Developer>>(`${base}/developers?size=100`);
  const apis = useFetched<Page<ApiName>>(`${base}/apis?size=100`);
  const envs = useFetched<Page<Environment>>(`${base}/envs?size=100`);
  const apiName = (id: string) => apis.data?.items.find((a) => a.id === id)?.name ?? id;
  const envName = (id: string) => envs.data?.items.find((e) => e.id === id)?.name ?? id;
  return (
    <Stack>
      <Title order={2}>Products</Title>
      {products.error && <Alert color="red">{products.error.message}</Alert>}
      {!products.data && <Loader aria-label="Loading products" />}
      {products.data && products.data.items.length === 0 && <Text>No product yet.</Text>}
      {products.data && products.data.items.length > 0 && (
        <Table aria-label="Products" striped>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Product</Table.Th>
              <Table.Th>APIs</Table.Th>
              <Table.Th>Quota</Table.Th>
              <Table.Th>Deployed in</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {products.data.items.map((product) => (
              <Table.Tr key={product.id}>
                <Table.Td>{product.displayName || product.name}</Table.Td>
                <Table.Td>
                  <Group gap={4}>
                    {product.apiIds.map((id) => (
                      <Badge key={id} variant="light">
                        {apiName(id)}
                      </Badge>
                    ))}
                  </Group>
                </Table.Td>
                <Table.Td>{quotaText(product.quota)}</Table.Td>
                <Table.Td>{product.environments.map(envName).join(", ") || "—"}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      <Title order={3}>Developers</Title>
      {developers.error && <Alert color="red">{developers.error.message}</Alert>}
      {developers.data && developers.data.items.length === 0 && <Text>No developer yet.</Text>}
      {developers.data && developers.data.items.length > 0 && (
        <Table aria-label="Developers" striped>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Email</Table.Th>
              <Table.Th>Status</Table.Th>
              <Table.Th>Apps</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {developers.data.items.map((developer) => (
              <Table.Tr key={developer.id}>
                <Table.Td>
                  {developer.firstName} {developer.lastName}
                </Table.Td>
                <Table.Td>{developer.email}</Table.Td>
                <Table.Td>{developer.status}</Table.Td>
                <Table.Td>{developer.appCount}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </Stack>
  );
}
