import {
  Alert,
  Anchor,
  FileInput,
  Badge,
  Button,
  Group,
  Loader,
  Modal,
  Stack,
  Table,
  Text,
  TextInput,
  Textarea,
  Title,
  Tooltip,
} from "@mantine/core";
import { useState } from "react";
import type { FormEvent } from "react";
import { Link } from "react-router";

import { ApiError, post, send } from "../api";
import type { Page } from "../api";
import { useAuth } from "../auth";
import { useFetched } from "../useFetched";

interface Api {
  id: string;
  name: string;
  desc: string;
  revisionCount: number;
  deployments: { environmentName: string; revisionNumber: number }[];
}

/** The seed's rule: "Add Service" is shown disabled, with the reason, without api.create. */
export function ApisPage() {
  const { org, can } = useAuth();
  const path = `/api/orgs/${org!.id}/apis`;
  const apis = useFetched<Page<Api>>(`${path}?size=100`);
  const [adding, setAdding] = useState(false);
  const allowed = can("api.create");
  const addService = (
    <Button onClick={() => setAdding(true)} disabled={!allowed}>
      Add Service
    </Button>
  );
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>APIs</Title>
        <Group>
          <ImportOpenApi path={`${path}/from-spec`} allowed={allowed} onImported={apis.reload} />
          {allowed ? (
            addService
          ) : (
            <Tooltip label="You need the api.create permission to add a service">
              <span tabIndex={0} aria-label="Add Service needs the api.create permission">
                {addService}
              </span>
            </Tooltip>
          )}
        </Group>
      </Group>
      {apis.error && <Alert color="red">{apis.error.message}</Alert>}
      {apis.loading && !apis.data && <Loader aria-label="Loading APIs" />}
      {apis.data && apis.data.items.length === 0 && <Text>No API yet.</Text>}
      {apis.data && apis.data.items.length > 0 && (
        <Table aria-label="APIs" striped>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Description</Table.Th>
              <Table.Th>Revisions</Table.Th>
              <Table.Th>Deployed</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {apis.data.items.map((api) => (
              <Table.Tr key={api.id}>
                <Table.Td>
                  <Anchor component={Link} to={`/apis/${api.id}`}>
                    {api.name}
                  </Anchor>
                </Table.Td>
                <Table.Td>{api.desc}</Table.Td>
                <Table.Td>{api.revisionCount}</Table.Td>
                <Table.Td>
                  <Group gap={4}>
                    {api.deployments.map((d) => (
                      <Badge key={d.environmentName} variant="light">
                        {d.environmentName}: revision {d.revisionNumber}
                      </Badge>
                    ))}
                  </Group>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      <AddService
        opened={adding}
        path={path}
        onClose={() => setAdding(false)}
        onAdded={() => {
          setAdding(false);
          apis.reload();
        }}
      />
    </Stack>
  );
}

const upload_ = (path: string, form: FormData) =>
  send<{ api: { name: string }; revision: { routeSpec: unknown[] } }>("POST", path, form);

/** An OpenAPI 3.x document (JSON or YAML file) becomes an API with revision 1: one route
 * per operation (the management API's from-spec import, sent as the multipart part `file`). */
function ImportOpenApi(props: { path: string; allowed: boolean; onImported: () => void }) {
  const [outcome, setOutcome] = useState<{ ok: boolean; text: string } | null>(null);
  async function upload(file: File | null) {
    if (!file) return;
    setOutcome(null);
    const form = new FormData();
    form.append("file", file);
    try {
      const done = await upload_(props.path, form);
      setOutcome({
        ok: true,
        text: `Imported ${done.api.name}: revision 1 with ${done.revision.routeSpec.length} routes`,
      });
      props.onImported();
    } catch (error) {
      setOutcome({ ok: false, text: error instanceof Error ? error.message : String(error) });
    }
  }
  return (
    <Stack gap={4}>
      <FileInput
        aria-label="Import OpenAPI"
        placeholder="Import OpenAPI…"
        accept=".json,.yaml,.yml,application/json,application/yaml"
        disabled={!props.allowed}
        value={null}
        onChange={upload}
        w={220}
      />
      {outcome && (
        <Text size="sm" c={outcome.ok ? "green" : "red"} role="status">
          {outcome.text}
        </Text>
      )}
    </Stack>
  );
}

function AddService(props: {
  opened: boolean;
  path: string;
  onClose: () => void;
  onAdded: () => void;
}) {
  const [name, setName] = useState("");
  const [desc, setDesc] = useState("");
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [failure, setFailure] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setErrors({});
    setFailure(null);
    try {
      await post(props.path, { name, desc });
      setName("");
      setDesc("");
      props.onAdded();
    } catch (error) {
      if (error instanceof ApiError && Object.keys(error.fieldErrors()).length > 0) {
        setErrors(error.fieldErrors());
      } else {
        setFailure(error instanceof Error ? error.message : String(error));
      }
    } finally {
      setBusy(false);
    }
  }

  return (
    <Modal opened={props.opened} onClose={props.onClose} title="Add Service">
      <form onSubmit={submit} aria-label="Add Service">
        <Stack>
          {failure && (
            <Alert color="red" role="alert">
              {failure}
            </Alert>
          )}
          <TextInput
            label="Name"
            required
            value={name}
            error={errors["/name"]}
            onChange={(e) => setName(e.currentTarget.value)}
          />
          <Textarea
            label="Description"
            value={desc}
            error={errors["/desc"]}
            onChange={(e) => setDesc(e.currentTarget.value)}
          />
          <Button type="submit" loading={busy}>
            Create
          </Button>
        </Stack>
      </form>
    </Modal>
  );
}
