import { Badge, Stack, Text, Title } from "@mantine/core";

import type { Page } from "../api";
import { useAuth } from "../auth";
import { Badges, FetchedTable } from "../components/DataTable";
import type { Columns } from "../components/DataTable";
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

/** A titled list of the organisation's ``path``. */
function Listed<T extends { id: string }>(
  props: Omit<Columns<T>, "label" | "rowKey"> & {
    title: string;
    path: string;
  },
) {
  const { title, path, ...columns } = props;
  const fetched = useFetched<Page<T>>(path);
  return (
    <Stack gap="xs">
      <Title order={3}>{title}</Title>
      <FetchedTable {...columns} fetched={fetched} label={title} rowKey={(item) => item.id} />
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
          <Badges values={u.roles.map((r) => r.name)} />,
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
