import { Anchor, AppShell, Button, Group, Text, Title } from "@mantine/core";
import { Link, NavLink, Outlet } from "react-router";

import { useSession } from "./auth";

export function Layout() {
  const { me, signOut } = useSession();
  return (
    <AppShell header={{ height: 60 }} padding="md">
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between" wrap="nowrap">
          <Group wrap="nowrap">
            <Anchor component={Link} to="/" underline="never" c="inherit">
              <Title order={3}>Developer portal</Title>
            </Anchor>
            <nav aria-label="Sections">
              <Group gap="md">
                <Anchor component={NavLink} to="/" end>
                  Catalogue
                </Anchor>
                {me && (
                  <Anchor component={NavLink} to="/apps">
                    My apps
                  </Anchor>
                )}
              </Group>
            </nav>
          </Group>
          {me ? (
            <Group wrap="nowrap">
              <Text size="sm">{me.display_name || me.email}</Text>
              <Button variant="subtle" onClick={signOut}>
                Sign out
              </Button>
            </Group>
          ) : (
            <Group wrap="nowrap">
              <Button component={Link} to="/sign-in" variant="subtle">
                Sign in
              </Button>
              <Button component={Link} to="/register" variant="light">
                Register
              </Button>
            </Group>
          )}
        </Group>
      </AppShell.Header>
      <AppShell.Main>
        <Outlet />
      </AppShell.Main>
    </AppShell>
  );
}
