import {
  Anchor,
  Button,
  Group,
  Modal,
  Stack,
  TagsInput,
  Text,
  TextInput,
  Textarea,
  Title,
} from "@mantine/core";
import { useState } from "react";
import type { FormEvent } from "react";
import { Link } from "react-router";

import { remove, saveItem } from "../api";
import type { Page } from "../api";
import { useAuth } from "../auth";
import { Badges, FetchedTable } from "../components/DataTable";
import { useFetched } from "../useFetched";
import { Failure, useSubmission } from "../useSubmission";

export interface Environment {
  id: string;
  name: string;
  description: string;
  gatewayHosts: string[];
}

const PERMISSION = "environment.manage";

/** The environments with their gateway hosts: added, changed and deleted here by a caller
 * with environment.manage (shown disabled, with the reason, to anyone else). */
export function EnvironmentsPage() {
  const { org, can } = useAuth();
  const path = `/api/orgs/${org!.id}/envs`;
  const envs = useFetched<Page<Environment>>(`${path}?size=100`);
  const [editing, setEditing] = useState<Environment | "new" | null>(null);
  const [deleting, setDeleting] = useState<Environment | null>(null);
  const allowed = can(PERMISSION);
  const saved = () => {
    setEditing(null);
    setDeleting(null);
    envs.reload();
  };
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>Environments</Title>
        <Button disabled={!allowed} onClick={() => setEditing("new")}>
          Add environment
        </Button>
      </Group>
      {!allowed && (
        <Text size="sm" c="dimmed">
          Adding, changing or deleting an environment needs the {PERMISSION} permission.
        </Text>
      )}
      <FetchedTable
        fetched={envs}
        label="Environments"
        empty="No environment yet: add one, then point a gateway at it by its gateway hosts."
        columns={["Name", "Gateway hosts", "Description", ""]}
        rowKey={(env) => env.id}
        row={(env) => [
          <Anchor component={Link} to={`/environments/${env.id}`}>
            {env.name}
          </Anchor>,
          env.gatewayHosts.length > 0 ? (
            <Badges values={env.gatewayHosts} />
          ) : (
            <Text size="sm" c="dimmed">
              none
            </Text>
          ),
          env.description,
          <Group gap={4} wrap="nowrap">
            <Button
              size="xs"
              variant="subtle"
              disabled={!allowed}
              aria-label={`Edit ${env.name}`}
              onClick={() => setEditing(env)}
            >
              Edit
            </Button>
            <Button
              size="xs"
              variant="subtle"
              color="red"
              disabled={!allowed}
              aria-label={`Delete ${env.name}`}
              onClick={() => setDeleting(env)}
            >
              Delete
            </Button>
          </Group>,
        ]}
      />
      {editing && (
        <EnvironmentForm
          path={path}
          env={editing === "new" ? null : editing}
          onClose={() => setEditing(null)}
          onSaved={saved}
        />
      )}
      {deleting && (
        <DeleteEnvironment
          path={`${path}/${deleting.id}`}
          env={deleting}
          onClose={() => setDeleting(null)}
          onDeleted={saved}
        />
      )}
    </Stack>
  );
}

/** The first message the API gave for an item under ``prefix`` (``/gatewayHosts/2``). */
function firstUnder(errors: Record<string, string>, prefix: string): string | undefined {
  const found = Object.keys(errors).find((pointer) => pointer.startsWith(prefix));
  return found && errors[found];
}

/** Add or change an environment: name, description, gateway hosts (each typed, then Enter).
 * What the API refuses is shown at its field: a malformed or taken host, a taken name. */
export function EnvironmentForm(props: {
  path: string;
  env: Environment | null;
  onClose: () => void;
  onSaved: () => void;
}) {
  const { env } = props;
  const [name, setName] = useState(env?.name ?? "");
  const [description, setDescription] = useState(env?.description ?? "");
  const [hosts, setHosts] = useState<string[]>(env?.gatewayHosts ?? []);
  const { errors, failure, busy, submit } = useSubmission();
  const title = env ? `Edit environment ${env.name}` : "Add environment";

  async function save(event: FormEvent) {
    event.preventDefault();
    await submit(async () => {
      await saveItem(props.path, env, { name, description, gatewayHosts: hosts });
      props.onSaved();
    });
  }

  return (
    <Modal opened onClose={props.onClose} title={title}>
      <form onSubmit={save} aria-label={title}>
        <Stack>
          <Failure message={Object.keys(errors).length > 0 ? null : failure} />
          <TextInput
            label="Name"
            description="Unique in the organisation, e.g. test or prod."
            required
            value={name}
            error={errors["/name"]}
            onChange={(e) => setName(e.currentTarget.value)}
          />
          <TagsInput
            label="Gateway hosts"
            description="The hostnames gateways serve this environment on (*.example.com allowed). Type one, then Enter."
            value={hosts}
            onChange={setHosts}
            splitChars={[",", " "]}
            error={errors["/gatewayHosts"] ?? firstUnder(errors, "/gatewayHosts/")}
          />
          <Textarea
            label="Description"
            value={description}
            error={errors["/description"]}
            onChange={(e) => setDescription(e.currentTarget.value)}
          />
          <Button type="submit" loading={busy}>
            {env ? "Save environment" : "Create environment"}
          </Button>
        </Stack>
      </form>
    </Modal>
  );
}

/** Deleting asks first; the API refuses while APIs are deployed there or upstreams remain,
 * and says so here. */
function DeleteEnvironment(props: {
  path: string;
  env: Environment;
  onClose: () => void;
  onDeleted: () => void;
}) {
  const { failure, busy, submit } = useSubmission();
  const title = `Delete environment ${props.env.name}`;
  return (
    <Modal opened onClose={props.onClose} title={title}>
      <Stack>
        <Text size="sm">
          The environment goes for good (its audit history stays). It can be deleted only once no
          API is deployed there and no upstream is left in it.
        </Text>
        <Failure message={failure} />
        <Group justify="end">
          <Button variant="default" onClick={props.onClose}>
            Keep it
          </Button>
          <Button
            color="red"
            loading={busy}
            onClick={() =>
              void submit(async () => {
                await remove(props.path);
                props.onDeleted();
              })
            }
          >
            Delete environment
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
