import {
  Badge,
  Button,
  Checkbox,
  Group,
  Modal,
  MultiSelect,
  Select,
  Stack,
  TextInput,
  Title,
} from "@mantine/core";
import { useState } from "react";
import type { FormEvent } from "react";

import { post } from "../api";
import type { Page } from "../api";
import { Badges, FetchedTable } from "../components/DataTable";
import { CopyOnce, generated } from "../components/CopyOnce";
import { useFetched } from "../useFetched";
import { Failure, useSubmission } from "../useSubmission";
import type { Environment } from "./Environments";
import type { Product } from "./ProductForm";

export interface Developer {
  id: string;
  firstName: string;
  lastName: string;
  email: string;
  status: string;
  appCount: number;
}

interface App {
  id: string;
  name: string;
  status: string;
  products: Record<string, number>;
  credentials: Record<string, unknown>;
}

interface AppWritten extends App {
  generatedCredentials: Record<string, Record<string, string>>;
}

const CREDENTIALS = [
  { plugin: "key-auth", label: "API key (key-auth)" },
  { plugin: "basic-auth", label: "Username and password (basic-auth)" },
  { plugin: "jwt-auth", label: "JWT signing key and secret (jwt-auth)" },
];

/** A developer's apps in one environment, and a new app with its products and generated
 * credentials (shown once, with copy buttons). */
export function DeveloperApps(props: {
  base: string;
  developer: Developer;
  environments: Environment[];
  products: Product[];
  allowed: boolean;
  onClose: () => void;
  onChanged: () => void;
}) {
  const { developer } = props;
  const [envId, setEnvId] = useState<string | null>(props.environments[0]?.id ?? null);
  const name = `${developer.firstName} ${developer.lastName}`;
  return (
    <Modal opened onClose={props.onClose} title={`Apps of ${name}`} size="xl">
      <Stack>
        <Select
          label="Environment"
          data={props.environments.map((e) => ({ value: e.id, label: e.name }))}
          value={envId}
          onChange={setEnvId}
          allowDeselect={false}
          w={260}
        />
        {envId && (
          <AppsIn
            key={envId}
            path={`${props.base}/developers/${developer.id}/envs/${envId}/apps`}
            products={props.products}
            allowed={props.allowed}
            onChanged={props.onChanged}
          />
        )}
      </Stack>
    </Modal>
  );
}

function AppsIn(props: {
  path: string;
  products: Product[];
  allowed: boolean;
  onChanged: () => void;
}) {
  const apps = useFetched<Page<App>>(`${props.path}?size=100`);
  const productName = (id: string) => props.products.find((p) => p.id === id)?.displayName ?? id;
  return (
    <Stack>
      <FetchedTable
        fetched={apps}
        label="Apps"
        empty="No app in this environment yet."
        columns={["App", "Status", "Products", "Credentials"]}
        rowKey={(app) => app.id}
        row={(app) => [
          app.name,
          <Badge color={app.status === "active" ? "green" : "gray"}>{app.status}</Badge>,
          <Badges values={Object.keys(app.products).map(productName)} />,
          <Badges values={Object.keys(app.credentials)} />,
        ]}
      />
      {props.allowed && (
        <CreateApp
          path={props.path}
          products={props.products}
          onCreated={() => {
            apps.reload();
            props.onChanged();
          }}
        />
      )}
    </Stack>
  );
}

function CreateApp(props: { path: string; products: Product[]; onCreated: () => void }) {
  const [name, setName] = useState("");
  const [products, setProducts] = useState<string[]>([]);
  const [credentials, setCredentials] = useState<string[]>(["key-auth"]);
  const [created, setCreated] = useState<AppWritten | null>(null);
  const { errors, failure, busy, submit } = useSubmission();

  async function create(event: FormEvent) {
    event.preventDefault();
    await submit(async () => {
      const app = await post<AppWritten>(props.path, {
        name,
        // the order chosen is the rank: the gateway meters the lowest that covers a call
        products: Object.fromEntries(products.map((id, rank) => [id, rank])),
        plugins: Object.fromEntries(credentials.map((plugin) => [plugin, {}])),
      });
      setCreated(app);
      setName("");
      setProducts([]);
      props.onCreated();
    });
  }

  return (
    <Stack>
      {created && (
        <CopyOnce
          title={`Credentials of ${created.name}`}
          values={generated(created.generatedCredentials)}
        />
      )}
      <form onSubmit={create} aria-label="Create app">
        <Stack>
          <Title order={4}>Create app</Title>
          <Failure message={Object.keys(errors).length > 0 ? null : failure} />
          <TextInput
            label="App name"
            required
            value={name}
            error={errors["/name"]}
            onChange={(e) => setName(e.currentTarget.value)}
          />
          <MultiSelect
            label="Products"
            description="In order of preference: a call is metered against the first that covers it"
            data={props.products.map((p) => ({ value: p.id, label: p.displayName || p.name }))}
            value={products}
            onChange={setProducts}
            error={errors["/products"]}
            searchable
          />
          <Checkbox.Group
            label="Credentials to generate"
            value={credentials}
            onChange={setCredentials}
            error={errors["/plugins"]}
          >
            <Group mt="xs">
              {CREDENTIALS.map((c) => (
                <Checkbox key={c.plugin} value={c.plugin} label={c.label} />
              ))}
            </Group>
          </Checkbox.Group>
          <Button type="submit" loading={busy}>
            Create app
          </Button>
        </Stack>
      </form>
    </Stack>
  );
}
