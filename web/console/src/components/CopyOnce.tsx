import { Alert, Button, Code, CopyButton, Group, Stack, Text } from "@mantine/core";

/** A secret the API returns once (a generated key, an invitation token): each value with a
 * copy button, and the warning that it will not be shown again. */
export function CopyOnce(props: { title: string; values: { label: string; value: string }[] }) {
  return (
    <Alert color="yellow" title={props.title} role="region" aria-label={props.title}>
      <Stack gap="xs">
        <Text size="sm">Copy it now: it is shown once and cannot be read again.</Text>
        {props.values.map(({ label, value }) => (
          <Group key={label} gap="xs" wrap="nowrap">
            <Text size="sm" fw={600}>
              {label}
            </Text>
            <Code aria-label={label}>{value}</Code>
            <CopyButton value={value}>
              {({ copied, copy }) => (
                <Button
                  size="xs"
                  variant="light"
                  color={copied ? "teal" : undefined}
                  aria-label={`Copy ${label}`}
                  onClick={copy}
                >
                  {copied ? "Copied" : "Copy"}
                </Button>
              )}
            </CopyButton>
          </Group>
        ))}
      </Stack>
    </Alert>
  );
}

/** ``{"key-auth": {"key": "..."}}`` as labelled values: "key-auth key". */
export function generated(credentials: Record<string, Record<string, string>>) {
  return Object.entries(credentials).flatMap(([plugin, fields]) =>
    Object.entries(fields).map(([field, value]) => ({ label: `${plugin} ${field}`, value })),
  );
}
