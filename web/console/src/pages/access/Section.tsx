import { Button, Group, Stack, Text, Title } from "@mantine/core";
import type { ReactNode } from "react";

import type { Page } from "../../api";
import { FetchedTable } from "../../components/DataTable";
import type { Columns } from "../../components/DataTable";
import type { Fetched } from "../../useFetched";

/** One part of the access page: its title, its "Add" action (disabled, with the reason,
 * for a caller without ``permission``), its table, and whatever form is open. */
export function Section<T extends { id: string }>(
  props: Omit<Columns<T>, "label" | "rowKey"> & {
    title: string;
    fetched: Fetched<Page<T>>;
    add: string;
    permission: string;
    allowed: boolean;
    onAdd: () => void;
    children?: ReactNode;
  },
) {
  const { title, fetched, add, permission, allowed, onAdd, children, ...columns } = props;
  return (
    <Stack gap="xs">
      <Group justify="space-between">
        <Title order={3}>{title}</Title>
        <Button variant="light" disabled={!allowed} onClick={onAdd}>
          {add}
        </Button>
      </Group>
      {!allowed && (
        <Text size="sm" c="dimmed">
          {add} needs the {permission} permission.
        </Text>
      )}
      <FetchedTable {...columns} fetched={fetched} label={title} rowKey={(item) => item.id} />
      {children}
    </Stack>
  );
}

/** A row's Edit button, named for screen readers by what it edits. */
export function EditButton(props: { what: string; onClick: () => void }) {
  return (
    <Button size="xs" variant="subtle" aria-label={`Edit ${props.what}`} onClick={props.onClick}>
      Edit
    </Button>
  );
}
