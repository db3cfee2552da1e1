import {
  Anchor,
  FileInput,
  Button,
  Group,
  Modal,
  Pagination,
  Stack,
  Text,
  TextInput,
  Textarea,
  Title,
  Tooltip,
} from "@mantine/core";
import { useDebouncedValue } from "@mantine/hooks";
import { useState } from "react";
import type { FormEvent } from "react";
import { Link } from "react-router";

import { post, query, send } from "../api";
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

/** APIs listed a page at a time, searched by the server (an organisation may have tens of
 * thousands). The seed's rule: "Add Service" is shown disabled, with the reason, without
 * api.create. */
export function ApisPage() {
  const { org, can } = useAuth();
  const path = `/api/orgs/${org!.id}/apis`;
  const [search, setSearch] = useState("");
  const [searched] = useDebouncedValue(search.trim(), 250);
  const [pageNumber, setPageNumber] = useState(1);
  const apis = useFetched<Page<Api>>(
    path + query({ search: searched, page: pageNumber, size: PAGE_SIZE }),
  );
  const pages = apis.data ? Math.max(1, Math.ceil(apis.data.total / PAGE_SIZE)) : 1;
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
      <TextInput
        label="Search APIs"
        placeholder="A part of the name"
        value={search}
        onChange={(e) => {
          setSearch(e.currentTarget.value);
          setPageNumber(1);
        }}
        w={320}
      />
      <FetchedTable
        fetched={apis}
        label="APIs"
        empty={
          searched
            ? `No API's name contains "${searched}".`
            : "No API yet: add a service, or import an OpenAPI file (JSON or YAML)."
        }
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
      {apis.data && apis.data.total > 0 && (
        <Group>
          <Pagination
            withEdges
            total={pages}
            value={pageNumber}
            onChange={setPageNumber}
            getControlProps={(control) => ({ "aria-label": `${control} page` })}
            getItemProps={(page) => ({ "aria-label": `Page ${page}` })}
          />
          <Text size="sm" c="dimmed" role="status" aria-label="APIs shown">
            {shownRange(apis.data)}
          </Text>
        </Group>
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

const PAGE_SIZE = 20;

const number = (n: number) => n.toLocaleString("en");

/** "21–40 of 10,000": which of the APIs the page shows. */
export function shownRange(page: Page<unknown>): string {
  const first = (page.page - 1) * page.size + 1;
  return `${number(first)}–${number(first + page.items.length - 1)} of ${number(page.total)}`;
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
