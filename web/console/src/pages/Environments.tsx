import { Anchor, Title } from "@mantine/core";
import { Link } from "react-router";

import type { Page } from "../api";
import { useAuth } from "../auth";
import { Badges, FetchedTable } from "../components/DataTable";
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
      <FetchedTable
        fetched={envs}
        label="Environments"
        empty="No environment yet."
        columns={["Name", "Gateway hosts", "Description"]}
        rowKey={(env) => env.id}
        row={(env) => [
          <Anchor component={Link} to={`/environments/${env.id}`}>
            {env.name}
          </Anchor>,
          <Badges values={env.gatewayHosts} />,
          env.description,
        ]}
      />
    </>
  );
}
