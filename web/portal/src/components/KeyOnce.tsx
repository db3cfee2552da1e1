import { Button, CopyButton, Group, Paper, Stack, Text, TextInput, Title } from "@mantine/core";

import type { AppWithKey } from "../types";

/** An app's key as creating the app (or rotating its key) answered it: shown this once, with
 * a copy button. ``onDone`` forgets it; nothing shows it again (the API keeps it encrypted
 * and answers only its first characters after this). */
export function KeyOnce({ app, onDone }: { app: AppWithKey; onDone: () => void }) {
  const key = app.credentials.find((credential) => credential.type === "key-auth")?.key ?? "";
  return (
    <Paper component="section" aria-label="New key" withBorder p="md" bg="yellow.0">
      <Stack gap="sm">
        <Title order={2} size="h4">
          The key of {app.name}
        </Title>
        <Text size="sm">
          Copy this key now: it is shown once. Send it in the <code>apikey</code> header of your
          requests to the gateway. If you lose it, rotate the key to get a new one.
        </Text>
        <Group align="end" wrap="nowrap">
          <TextInput
            label="API key"
            value={key}
            readOnly
            onFocus={(event) => event.currentTarget.select()}
            styles={{ input: { fontFamily: "monospace" } }}
            style={{ flex: 1 }}
          />
          <CopyButton value={key}>
            {({ copied, copy }) => (
              <Button color={copied ? "teal" : "blue"} onClick={copy} aria-label="Copy key">
                {copied ? "Copied" : "Copy"}
              </Button>
            )}
          </CopyButton>
        </Group>
        <Group>
          <Button variant="default" onClick={onDone}>
            I have stored the key
          </Button>
        </Group>
      </Stack>
    </Paper>
  );
}
