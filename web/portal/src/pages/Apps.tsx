import { Anchor, Button, Card, Group, Stack, Table, Text, TextInput, Title } from "@mantine/core";
import { useState } from "react";
import type { FormEvent } from "react";
import { Link } from "react-router";

import { portal, portalList } from "../api";
import { KeyOnce } from "../components/KeyOnce";
import { Refusal, Shown, useAction, useFields, useLoaded } from "../loading";
import type { AppWithKey, DeveloperApp } from "../types";

export const keyHint = (app: DeveloperApp) => `${app.key_hint}…`;

/** The developer's apps, and a new one: its key is shown once, here. */
export function AppsPage() {
  const apps = useLoaded(() => portalList<DeveloperApp>("/apps?limit=500"), "/apps");
  const [created, setCreated] = useState<AppWithKey | null>(null);
  return (
    <Stack gap="lg">
      <Title order={1}>My apps</Title>
      <Text c="dimmed">
        An app holds the key your client sends to the gateway; subscribe it to APIs and products
        from the catalogue.
      </Text>
      {created && <KeyOnce app={created} onDone={() => setCreated(null)} />}
      <CreateApp
        onCreated={(app) => {
          setCreated(app);
          apps.reload();
        }}
      />
      <Shown loaded={apps} what="your apps">
        {({ data }) =>
          data.length === 0 ? (
            <Text>You have no app yet.</Text>
          ) : (
            <Table
              aria-label="Apps"
              striped
              data={{
                head: ["App", "Description", "Key", "Created"],
                body: data.map((app) => [
                  <Anchor component={Link} to={`/apps/${app.id}`}>
                    {app.name}
                  </Anchor>,
                  app.description,
                  <code>{keyHint(app)}</code>,
                  new Date(app.created_at).toLocaleDateString("en-GB"),
                ]),
              }}
            />
          )
        }
      </Shown>
    </Stack>
  );
}

function CreateApp({ onCreated }: { onCreated: (app: AppWithKey) => void }) {
  const { busy, problem, fieldError, run } = useAction();
  const app = useFields({ name: "", description: "" }, fieldError);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    void run(async () => {
      onCreated(await portal<AppWithKey>("POST", "/apps", app.values));
      app.clear();
    });
  };

  return (
    <Card withBorder padding="md">
      <form onSubmit={submit} aria-label="Create an app">
        <Stack gap="sm">
          <Title order={2} size="h4">
            Create an app
          </Title>
          <Refusal problem={problem} title="The app was not created" />
          <Group align="start">
            <TextInput label="Name" required {...app.bind("name")} w={240} />
            <TextInput label="Description" {...app.bind("description")} style={{ flex: 1 }} />
          </Group>
          <Group>
            <Button type="submit" loading={busy}>
              Create app
            </Button>
          </Group>
        </Stack>
      </form>
    </Card>
  );
}
