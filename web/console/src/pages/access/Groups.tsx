import { Button, Modal, MultiSelect, Stack, TextInput, Textarea } from "@mantine/core";
import { useState } from "react";
import type { FormEvent } from "react";

import { saveItem } from "../../api";
import type { Page } from "../../api";
import { Badges } from "../../components/DataTable";
import type { Fetched } from "../../useFetched";
import { Failure, useSubmission } from "../../useSubmission";
import { firstUnder } from "./Roles";
import { EditButton, Section } from "./Section";
import type { GroupRow, Role } from "./types";
import type { User } from "./Users";

/** Groups: roles granted to every member at once. */
export function GroupsSection(props: {
  base: string;
  groups: Fetched<Page<GroupRow>>;
  roles: Role[];
  users: User[];
  allowed: boolean;
}) {
  const [editing, setEditing] = useState<GroupRow | "new" | null>(null);
  const roleName = (id: string) => props.roles.find((r) => r.id === id)?.name ?? id;
  return (
    <Section<GroupRow>
      title="Groups"
      fetched={props.groups}
      add="Add group"
      permission="role.manage"
      allowed={props.allowed}
      onAdd={() => setEditing("new")}
      empty="No group yet."
      columns={["Group", "Roles", "Members", ""]}
      row={(g) => [
        g.name,
        <Badges values={g.roleIds.map(roleName)} />,
        g.memberIds.length,
        props.allowed && <EditButton what={g.name} onClick={() => setEditing(g)} />,
      ]}
    >
      {editing && (
        <GroupForm
          path={`${props.base}/groups`}
          group={editing === "new" ? null : editing}
          roles={props.roles}
          users={props.users}
          onClose={() => setEditing(null)}
          onSaved={() => {
            setEditing(null);
            props.groups.reload();
          }}
        />
      )}
    </Section>
  );
}

function GroupForm(props: {
  path: string;
  group: GroupRow | null;
  roles: Role[];
  users: User[];
  onClose: () => void;
  onSaved: () => void;
}) {
  const { group } = props;
  const [name, setName] = useState(group?.name ?? "");
  const [description, setDescription] = useState(group?.description ?? "");
  const [roleIds, setRoleIds] = useState<string[]>(group?.roleIds ?? []);
  const [memberIds, setMemberIds] = useState<string[]>(group?.memberIds ?? []);
  const { errors, failure, busy, submit } = useSubmission();
  const title = group ? `Edit group ${group.name}` : "Add group";

  async function save(event: FormEvent) {
    event.preventDefault();
    await submit(async () => {
      await saveItem(props.path, group, { name, description, roleIds, memberIds });
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
          <MultiSelect
            label="Roles"
            data={props.roles.map((r) => ({ value: r.id, label: r.name }))}
            value={roleIds}
            onChange={setRoleIds}
            error={errors["/roleIds"] ?? firstUnder(errors, "/roleIds/")}
          />
          <MultiSelect
            label="Members"
            searchable
            data={props.users.map((u) => ({ value: u.id, label: u.email }))}
            value={memberIds}
            onChange={setMemberIds}
            error={errors["/memberIds"] ?? firstUnder(errors, "/memberIds/")}
          />
          <Button type="submit" loading={busy}>
            {group ? "Save group" : "Create group"}
          </Button>
        </Stack>
      </form>
    </Modal>
  );
}
