import { MultiSelect } from "@mantine/core";
import { useDebouncedValue } from "@mantine/hooks";
import { useState } from "react";

import { query } from "../api";
import type { Page } from "../api";
import { useAuth } from "../auth";
import { useFetched } from "../useFetched";

interface ApiName {
  id: string;
  name: string;
}

/** Choose APIs by name, searched by the server (an organisation may have thousands): the
 * first 20 matches of what is typed, the chosen ones kept with their names. */
export function ApiPicker(props: {
  value: string[];
  onChange: (ids: string[]) => void;
  /** names of APIs already chosen (by id) */
  known: Record<string, string>;
  error?: string;
}) {
  const { org } = useAuth();
  const [search, setSearch] = useState("");
  const [searched] = useDebouncedValue(search.trim(), 250);
  const found = useFetched<Page<ApiName>>(
    `/api/orgs/${org!.id}/apis` + query({ search: searched, size: 20 }),
  );
  const [names, setNames] = useState<Record<string, string>>(props.known);
  const matches = found.data?.items ?? [];
  const data = new Map<string, string>();
  for (const id of props.value) data.set(id, names[id] ?? props.known[id] ?? id);
  for (const api of matches) data.set(api.id, api.name);
  return (
    <MultiSelect
      label="APIs"
      placeholder="Search APIs by name"
      searchable
      searchValue={search}
      onSearchChange={setSearch}
      data={[...data.entries()].map(([value, label]) => ({ value, label }))}
      value={props.value}
      error={props.error}
      nothingFoundMessage={found.loading ? "Searching…" : "No API's name contains that"}
      onChange={(ids) => {
        setNames({ ...names, ...Object.fromEntries(matches.map((a) => [a.id, a.name])) });
        props.onChange(ids);
      }}
    />
  );
}
