import {
  Anchor,
  FileInput,
  Button,
  Group,
  Modal,
  Stack,
  Text,
  TextInput,
  Textarea,
  Title,
  Tooltip,
} from "@mantine/core";
import { useState } from "react";
import type { FormEvent } from "react";
import { Link } from "react-router";

import { post, send } from "../api";
import type { Page } from "../api";
import { useAuth } from "../auth";
import { Badges, FetchedTable } from "../components/DataTable";
import { useFetched } from "../useFetched";
import { Failure, useSubmission } from "../useSubmission";

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
      <FetchedTable
        fetched={apis}
        label="APIs"
        empty="No API yet."
        columns={["Name", "Description", "Revisions", "Deployed"]}
        rowKey={(api) => api.id}
        row={(api) => [
          <Anchor component={Link} to={`/apis/${api.id}`}>
            {api.name}
          </Anchor>,
          api.desc,
          api.revisionCount,
          <Badges
            values={api.deployments.map(
              (d) => `${d.environmentName}: revision ${d.revisionNumber}`,
            )}
          />,
        ]}
      />
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
  const { errors, failure, busy, submit } = useSubmission();

  async function create(event: FormEvent) {
    event.preventDefault();
    await submit(async () => {
      await post(props.path, { name, desc });
      setName("");
      setDesc("");
      props.onAdded();
    });
  }

  return (
    <Modal opened={props.opened} onClose={props.onClose} title="Add Service">
      <form onSubmit={create} aria-label="Add Service">
        <Stack>
          {/* a refusal of the fields is shown at them */}
          <Failure message={Object.keys(errors).length > 0 ? null : failure} />
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
