import { Alert, Badge, Group, Loader, Table, Text } from "@mantine/core";
import type { ReactNode } from "react";

import type { Fetched } from "../useFetched";

export interface Columns<T> {
  /** the table's accessible name */
  label: string;
  columns: string[];
  /** one cell per column */
  row: (item: T) => ReactNode[];
  rowKey: (item: T) => string;
  /** said instead of an empty table */
  empty: string;
}

/** Items as a table named ``label``, or the ``empty`` sentence when there are none. */
export function DataTable<T>(props: Columns<T> & { items: T[] }) {
  if (props.items.length === 0) return <Text>{props.empty}</Text>;
  return (
    <Table aria-label={props.label} striped>
      <Table.Thead>
        <Table.Tr>
          {props.columns.map((column, i) => (
            <Table.Th key={i}>{column}</Table.Th>
          ))}
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {props.items.map((item) => (
          <Table.Tr key={props.rowKey(item)}>
            {props.row(item).map((cell, i) => (
              <Table.Td key={i}>{cell}</Table.Td>
            ))}
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

/** A list the API answered (``{items}``) as a ``DataTable``: its error, or a loader until it arrives. */
export function FetchedTable<T>(props: Columns<T> & { fetched: Fetched<{ items: T[] }> }) {
  const { fetched, ...columns } = props;
  if (fetched.error) return <Alert color="red">{fetched.error.message}</Alert>;
  if (!fetched.data) return <Loader aria-label={`Loading ${props.label}`} />;
  return <DataTable {...columns} items={fetched.data.items} />;
}

/** Short values side by side (hosts, roles, deployments). */
export function Badges({ values }: { values: string[] }) {
  return (
    <Group gap={4}>
      {values.map((value) => (
        <Badge key={value} variant="light" tt="none">
          {value}
        </Badge>
      ))}
    </Group>
  );
}
