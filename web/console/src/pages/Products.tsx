import { Stack, Title } from "@mantine/core";

import type { Page } from "../api";
import { useAuth } from "../auth";
import { Badges, FetchedTable } from "../components/DataTable";
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
      <FetchedTable
        fetched={products}
        label="Products"
        empty="No product yet."
        columns={["Product", "APIs", "Quota", "Deployed in"]}
        rowKey={(product) => product.id}
        row={(product) => [
          product.displayName || product.name,
          <Badges values={product.apiIds.map(apiName)} />,
          quotaText(product.quota),
          product.environments.map(envName).join(", ") || "—",
        ]}
      />
      <Title order={3}>Developers</Title>
      <FetchedTable
        fetched={developers}
        label="Developers"
        empty="No developer yet."
        columns={["Name", "Email", "Status", "Apps"]}
        rowKey={(developer) => developer.id}
        row={(d) => [`${d.firstName} ${d.lastName}`, d.email, d.status, d.appCount]}
      />
    </Stack>
  );
}
