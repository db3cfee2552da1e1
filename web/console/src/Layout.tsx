import { AppShell, Button, Group, NavLink, Select, Text, Title } from "@mantine/core";
import { NavLink as RouterLink, Outlet } from "react-router";

import { useAuth } from "./auth";

const SECTIONS = [
  { to: "/environments", label: "Environments" },
  { to: "/upstreams", label: "Upstreams" },
  { to: "/apis", label: "APIs" },
  { to: "/products", label: "Products" },
  { to: "/analytics", label: "Analytics" },
  { to: "/access", label: "Access" },
  { to: "/audit-log", label: "Audit log" },
  { to: "/portal-registrations", label: "Portal registrations" },
];

export function Layout() {
  const { me, org, chooseOrg, signOut } = useAuth();
  return (
    <AppShell header={{ height: 56 }} navbar={{ width: 220, breakpoint: "sm" }} padding="md">
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between">
          <Title order={3}>Portico</Title>
          <Group>
            <Select
              aria-label="Organisation"
              data={(me?.orgs ?? []).map((o) => ({ value: o.id, label: o.name }))}
              value={org?.id ?? null}
              onChange={(id) => id && chooseOrg(id)}
              allowDeselect={false}
              w={220}
            />
            <Text size="sm">{me?.displayName || me?.email}</Text>
            <Button variant="subtle" onClick={signOut}>
              Sign out
            </Button>
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs" aria-label="Sections">
        {SECTIONS.map((section) => (
          <NavLink key={section.to} component={RouterLink} to={section.to} label={section.label} />
        ))}
      </AppShell.Navbar>
      <AppShell.Main>
        {org ? <Outlet /> : <Text>You are not a member of any organisation.</Text>}
      </AppShell.Main>
    </AppShell>
  );
}
