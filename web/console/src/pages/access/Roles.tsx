import {
  Button,
  Checkbox,
  Modal,
  SimpleGrid,
  Stack,
  Text,
  TextInput,
  Textarea,
} from "@mantine/core";
import { useState } from "react";
import type { FormEvent } from "react";

import { saveItem } from "../../api";
import type { Page } from "../../api";
import type { Fetched } from "../../useFetched";
import { useFetched } from "../../useFetched";
import { Failure, useSubmission } from "../../useSubmission";
import { EditButton, Section } from "./Section";
import type { Role } from "./types";

interface Permission {
  key: string;
  label: string;
}

/** Roles: the predefined ones (read-only) and custom ones, defined by their permissions
 * (the API refuses a permission the caller does not hold itself). */
export function RolesSection(props: {
  base: string;
  roles: Fetched<Page<Role>>;
  allowed: boolean;
}) {
  const [editing, setEditing] = useState<Role | "new" | null>(null);
  return (
    <Section<Role>
      title="Roles"
      fetched={props.roles}
      add="Add role"
      permission="role.manage"
      allowed={props.allowed}
      onAdd={() => setEditing("new")}
      empty="No role."
      columns={["Role", "Permissions", "", ""]}
      row={(r) => [
        r.name,
        r.permissions.join(", "),
        <Text size="sm" c={r.predefined ? "dimmed" : undefined}>
          {r.predefined ? "predefined" : "custom"}
        </Text>,
        props.allowed && !r.predefined && (
          <EditButton what={r.name} onClick={() => setEditing(r)} />
        ),
      ]}
    >
      {editing && (
        <RoleForm
          base={props.base}
          role={editing === "new" ? null : editing}
          onClose={() => setEditing(null)}
          onSaved={() => {
            setEditing(null);
            props.roles.reload();
          }}
        />
      )}
    </Section>
  );
}

function RoleForm(props: {
  base: string;
  role: Role | null;
  onClose: () => void;
  onSaved: () => void;
}) {
  const { role } = props;
  const catalogue = useFetched<{ items: Permission[] }>(`${props.base}/permissions`);
  const [name, setName] = useState(role?.name ?? "");
  const [description, setDescription] = useState(role?.description ?? "");
  const [permissions, setPermissions] = useState<string[]>(role?.permissions ?? []);
  const { errors, failure, busy, submit } = useSubmission();
  const title = role ? `Edit role ${role.name}` : "Add role";

  async function save(event: FormEvent) {
    event.preventDefault();
    await submit(async () => {
      await saveItem(`${props.base}/roles`, role, { name, description, permissions });
      props.onSaved();
    });
  }

  return (
    <Modal opened onClose={props.onClose} title={title} size="lg">
      <form onSubmit={save} aria-label={title}>
        <Stack>
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
            value={description}
            error={errors["/description"]}
            onChange={(e) => setDescription(e.currentTarget.value)}
          />
          <Checkbox.Group
            label="Permissions"
            value={permissions}
            onChange={setPermissions}
            error={errors["/permissions"] ?? firstUnder(errors, "/permissions/")}
          >
            <SimpleGrid cols={2} mt="xs">
              {(catalogue.data?.items ?? []).map((p) => (
                <Checkbox key={p.key} value={p.key} label={`${p.key}: ${p.label}`} />
              ))}
            </SimpleGrid>
          </Checkbox.Group>
          <Button type="submit" loading={busy}>
            {role ? "Save role" : "Create role"}
          </Button>
        </Stack>
      </form>
    </Modal>
  );
}

/** The first error of a list's items (``/permissions/3``), for the list's field. */
export function firstUnder(errors: Record<string, string>, prefix: string): string | undefined {
  return Object.entries(errors).find(([pointer]) => pointer.startsWith(prefix))?.[1];
}
