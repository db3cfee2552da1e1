import { Stack, Title } from "@mantine/core";

import type { Page } from "../api";
import { useAuth } from "../auth";
import { useFetched } from "../useFetched";
import { ConsumersSection } from "./access/Consumers";
import type { Consumer } from "./access/Consumers";
import { GroupsSection } from "./access/Groups";
import { IdentityProvidersSection } from "./access/IdentityProviders";
import type { IdentityProvider } from "./access/IdentityProviders";
import { RolesSection } from "./access/Roles";
import type { GroupRow, Role } from "./access/types";
import type { User } from "./access/Users";
import { UsersSection } from "./access/Users";

/** Who may do what: users with their roles, roles with their permissions, groups,
 * consumers (credentials masked as the API returns them) and identity providers; each
 * added and changed here, or shown disabled with the permission it needs. */
export function AccessPage() {
  const { org, can } = useAuth();
  const base = `/api/orgs/${org!.id}`;
  const users = useFetched<Page<User>>(`${base}/users?size=100`);
  const roles = useFetched<Page<Role>>(`${base}/roles?size=100`);
  const groups = useFetched<Page<GroupRow>>(`${base}/groups?size=100`);
  const consumers = useFetched<Page<Consumer>>(`${base}/consumers?size=100`);
  const providers = useFetched<Page<IdentityProvider>>(`${base}/identity-providers?size=100`);
  const roleItems = roles.data?.items ?? [];
  const groupItems = groups.data?.items ?? [];
  return (
    <Stack gap="xl">
      <Title order={2}>Access</Title>
      <UsersSection
        base={base}
        users={users}
        roles={roleItems}
        groups={groupItems}
        allowed={can("user.manage")}
      />
      <RolesSection base={base} roles={roles} allowed={can("role.manage")} />
      <GroupsSection
        base={base}
        groups={groups}
        roles={roleItems}
        users={users.data?.items ?? []}
        allowed={can("role.manage")}
      />
      <ConsumersSection base={base} consumers={consumers} allowed={can("consumer.manage")} />
      <IdentityProvidersSection base={base} providers={providers} allowed={can("idp.manage")} />
    </Stack>
  );
}
