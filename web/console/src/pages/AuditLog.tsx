import { Alert, Badge, Button, Loader, Stack, Table, Text, Title } from "@mantine/core";
import { Fragment, useState } from "react";

import type { Page } from "../api";
import { useAuth } from "../auth";
import { JsonDiff } from "../JsonDiff";
import { useFetched } from "../useFetched";

export interface AuditEntry {
  id: string;
  occurredAt: string;
  actor: { email: string | null; kind: string };
  action: string;
  entityType: string;
  entityId: string | null;
  summary: string;
  before: unknown;
  after: unknown;
}

/** What an entry is about when the API wrote no summary (the management API's entries):
 * the entity's kind and its name, email or username, from its after (or before) snapshot. */
export function subject(entry: AuditEntry): string {
  const named = (value: unknown) => {
    if (!value || typeof value !== "object") return undefined;
    const fields = value as Record<string, unknown>;
    const found = [fields.name, fields.email, fields.username].find((v) => typeof v === "string");
    return found as string | undefined;
  };
  const name = named(entry.after) ?? named(entry.before);
  return [entry.entityType, name].filter(Boolean).join(" ");
}

/** Who changed what, newest first; each change's before and after as a diff. */
export function AuditLogPage() {
  const { org, can } = useAuth();
  const [open, setOpen] = useState<string | null>(null);
  const log = useFetched<Page<AuditEntry>>(`/api/orgs/${org!.id}/audit-log?size=50`);
  if (!can("audit.read"))
    return <Text>Reading the audit log needs the audit.read permission.</Text>;
  return (
    <Stack>
      <Title order={2}>Audit log</Title>
      {log.error && <Alert color="red">{log.error.message}</Alert>}
      {!log.data && <Loader aria-label="Loading the audit log" />}
      {log.data && log.data.items.length === 0 && <Text>Nothing has changed yet.</Text>}
      {log.data && log.data.items.length > 0 && (
        <Table aria-label="Audit log">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>When</Table.Th>
              <Table.Th>Who</Table.Th>
              <Table.Th>Action</Table.Th>
              <Table.Th>What</Table.Th>
              <Table.Th />
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {log.data.items.map((entry) => (
              <Fragment key={entry.id}>
                <Table.Tr>
                  <Table.Td>{new Date(entry.occurredAt).toLocaleString()}</Table.Td>
                  <Table.Td>{entry.actor.email ?? entry.actor.kind}</Table.Td>
                  <Table.Td>
                    <Badge variant="light" tt="none">
                      {entry.action}
                    </Badge>
                  </Table.Td>
                  <Table.Td>{entry.summary || subject(entry)}</Table.Td>
                  <Table.Td>
                    <Button
                      size="xs"
                      variant="subtle"
                      aria-expanded={open === entry.id}
                      onClick={() => setOpen(open === entry.id ? null : entry.id)}
                    >
                      {open === entry.id ? "Hide changes" : "Show changes"}
                    </Button>
                  </Table.Td>
                </Table.Tr>
                {open === entry.id && (
                  <Table.Tr>
                    <Table.Td colSpan={5}>
                      <JsonDiff
                        from={entry.before}
                        to={entry.after}
                        label={`Changes of ${entry.action}`}
                      />
                    </Table.Td>
                  </Table.Tr>
                )}
              </Fragment>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </Stack>
  );
}
