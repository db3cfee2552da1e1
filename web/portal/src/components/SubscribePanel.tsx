import { Alert, Anchor, Button, Card, Group, Select, Stack, Text, Title } from "@mantine/core";
import { useState } from "react";
import type { FormEvent } from "react";
import { Link } from "react-router";

import { portal, portalList } from "../api";
import { useSession } from "../auth";
import { Refusal, Shown, useAction, useLoaded } from "../loading";
import type { DeveloperApp, Subscription } from "../types";

/** What is subscribed to: an API or a product of the catalogue. */
export interface Subscribable {
  bundle: "api" | "product";
  id: string;
  title: string;
}

/** Ask for one of the developer's apps to be given access to ``node``: the request waits for
 * an administrator's approval (its status is on the app's page). */
export function SubscribePanel({ node }: { node: Subscribable }) {
  const { me } = useSession();
  return (
    <Card withBorder padding="md">
      <Stack gap="sm">
        <Title order={2} size="h4">
          Subscribe
        </Title>
        {me ? (
          <AppChoice node={node} />
        ) : (
          <Text size="sm">
            <Anchor component={Link} to="/sign-in">
              Sign in
            </Anchor>{" "}
            to subscribe one of your apps to {node.title}.
          </Text>
        )}
      </Stack>
    </Card>
  );
}

function AppChoice({ node }: { node: Subscribable }) {
  const apps = useLoaded(() => portalList<DeveloperApp>("/apps?limit=500"), "/apps");
  const [appId, setAppId] = useState<string | null>(null);
  const [requested, setRequested] = useState<{
    app: DeveloperApp;
    made: Subscription;
  } | null>(null);
  const { busy, problem, run } = useAction();

  return (
    <Shown loaded={apps} what="your apps">
      {({ data }) => {
        if (data.length === 0) {
          return (
            <Text size="sm">
              You have no app yet.{" "}
              <Anchor component={Link} to="/apps">
                Create an app
              </Anchor>{" "}
              to subscribe it.
            </Text>
          );
        }
        const chosen = data.find((app) => app.id === appId) ?? null;
        const submit = (event: FormEvent) => {
          event.preventDefault();
          if (!chosen) return;
          void run(async () => {
            const made = await portal<Subscription>("POST", `/apps/${chosen.id}/subscriptions`, {
              [node.bundle]: node.id,
            });
            setRequested({ app: chosen, made });
          });
        };
        return (
          <form onSubmit={submit} aria-label={`Subscribe to ${node.title}`}>
            <Stack gap="sm">
              <Group align="end">
                <Select
                  label="App"
                  placeholder="Choose one of your apps"
                  data={data.map((app) => ({ value: app.id, label: app.name }))}
                  value={appId}
                  onChange={(value) => {
                    setAppId(value);
                    setRequested(null);
                  }}
                  w={260}
                />
                <Button type="submit" loading={busy} disabled={!chosen}>
                  Subscribe
                </Button>
              </Group>
              <Refusal problem={problem} title="Subscription refused" />
              {requested && (
                <Alert color="blue" role="status" title="Subscription requested">
                  {requested.app.name} asked for {node.title}: {requested.made.status}, waiting for
                  an administrator&apos;s approval.{" "}
                  <Anchor component={Link} to={`/apps/${requested.app.id}`}>
                    See {requested.app.name}&apos;s subscriptions
                  </Anchor>
                </Alert>
              )}
            </Stack>
          </form>
        );
      }}
    </Shown>
  );
}
