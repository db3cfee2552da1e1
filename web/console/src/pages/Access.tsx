import { Alert, Badge, Group, Stack, Table, Text, Title } from "@mantine/core";
import type { ReactNode } from "react";

import type { Page } from "../api";
import { useAuth } from "../auth";
import { useFetched } from "../useFetched";

interface User {
  id: string;
  email: string;
  displayName: string;
  status: string;
  roles: { id: string; name: string }[];
  groupIds: string[];
}

interface Role {
  id: string;
  name: string;
  description: string;
  permissions: string[];
  predefined: boolean;
}

interface GroupRow {
  id: string;
  name: string;
  roleIds: string[];
  memberIds: string[];
}

interface Consumer {
  id: string;
  username: string;
  description: string;
  plugins: Record<string, unknown>;
}

interface IdentityProvider {
  id: string;
  name: string;
  entityId: string;
  mappingCount: number;
  active: boolean;
}

function Listed<T>(props: {
  title: string;
  path: string;
  empty: string;
  columns: string[];
  row: (item: T) => ReactNode[];
}) {
  const found = useFetched<Page<T>>(props.path);
  return (
    <Stack gap="xs">
      <Title order={3}>{props.title}</Title>
      {found.error && <Alert color="red">{found.error.message}</Alert>}
      {found.data && found.data.items.length === 0 && <Text>{props.empty}</Text>}
      {found.data && found.data.items.length > 0 && (
        <Table aria-label={props.title} striped>
          <Table.Thead>
            <Table.Tr>
              {props.columns.map((c) => (
                <Table.Th key={c}>{c}</Table.Th>
              ))}
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {found.data.items.map((item, i) => (
              <Table.Tr key={i}>
                {props.row(item).map((cell, j) => (
                  <Table.Td key={j}>{cell}</Table.Td>
                ))}
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </Stack>
  );
}

/** Who may do what: users with their roles, roles with their permissions, groups,
 * consumers (credentials masked as the API returns them) and identity providers. */
export function AccessPage() {
  const { org, can } = useAuth();
  const base = `/api/orgs/${org!.id}`;
  return (
    <Stack gap="xl">
      <Title order={2}>Access</Title>
      {can("user.manage") || can("role.manage") ? null : (
        <Text c="dimmed">
          Changing users and roles needs the user.manage and role.manage permissions.
        </Text>
      )}
      <Listed<User>
        title="Users"
        path={`${base}/users?size=100`}
        empty="No user."
        columns={["User", "Email", "Status", "Roles"]}
        row={(u) => [
          u.displayName,
          u.email,
          u.status,
          <Group gap={4}>
            {u.roles.map((r) => (
              <Badge key={r.id} variant="light">
                {r.name}
              </Badge>
            ))}
          </Group>,
        ]}
      />
      <Listed<Role>
        title="Roles"
        path={`${base}/roles?size=100`}
        empty="No role."
        columns={["Role", "Permissions", ""]}
        row={(r) => [
          r.name,
          r.permissions.join(", "),
          r.predefined ? <Badge color="gray">predefined</Badge> : <Badge>custom</Badge>,
        ]}
      />
      <Listed<GroupRow>
        title="Groups"
        path={`${base}/groups?size=100`}
        empty="No group yet."
        columns={["Group", "Roles", "Members"]}
        row={(g) => [g.name, g.roleIds.length, g.memberIds.length]}
      />
      <Listed<Consumer>
        title="Consumers"
        path={`${base}/consumers?size=100`}
        empty="No consumer yet."
        columns={["Consumer", "Credentials and plugins"]}
        row={(c) => [c.username, Object.keys(c.plugins).join(", ") || "—"]}
      />
      <Listed<IdentityProvider>
        title="Identity providers"
        path={`${base}/identity-providers?size=100`}
        empty="No identity provider configured."
        columns={["Configuration", "Entity id", "Mappings", "State"]}
        row={(p) => [
          p.name,
          p.entityId,
          p.mappingCount,
          p.active ? (
            <Badge color="green">active</Badge>
          ) : (
            <Badge color="gray">inactive: no mapping</Badge>
          ),
        ]}
      />
    </Stack>
  );
}
