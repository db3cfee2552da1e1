import { Button, Modal, MultiSelect, Stack, Text, TextInput } from "@mantine/core";
import { useState } from "react";
import type { FormEvent } from "react";

import { patch, post } from "../../api";
import type { Page } from "../../api";
import { Badges } from "../../components/DataTable";
import { CopyOnce } from "../../components/CopyOnce";
import type { Fetched } from "../../useFetched";
import { Failure, useSubmission } from "../../useSubmission";
import { EditButton, Section } from "./Section";
import type { GroupRow, Role } from "./types";

export interface User {
  id: string;
  email: string;
  displayName: string;
  status: string;
  roleIds: string[];
  roles: { id: string; name: string }[];
  groupIds: string[];
}

interface Invited extends User {
  invitation: { token: string; acceptUrl: string; expiresAt: string };
}

/** The organisation's users: invited by email with their roles and groups (the invitation
 * shown once, to hand over), and their roles and groups changed. */
export function UsersSection(props: {
  base: string;
  users: Fetched<Page<User>>;
  roles: Role[];
  groups: GroupRow[];
  allowed: boolean;
}) {
  const [editing, setEditing] = useState<User | "new" | null>(null);
  const [invited, setInvited] = useState<Invited | null>(null);
  return (
    <Section<User>
      title="Users"
      fetched={props.users}
      add="Invite user"
      permission="user.manage"
      allowed={props.allowed}
      onAdd={() => setEditing("new")}
      empty="No user."
      columns={["User", "Email", "Status", "Roles", ""]}
      row={(u) => [
        u.displayName || (
          <Text size="sm" c="dimmed">
            {u.status === "invited" ? "not accepted yet" : "—"}
          </Text>
        ),
        u.email,
        u.status,
        <Badges values={u.roles.map((r) => r.name)} />,
        props.allowed && <EditButton what={u.email} onClick={() => setEditing(u)} />,
      ]}
    >
      {invited && (
        <CopyOnce
          title={`Invitation of ${invited.email}`}
          values={[
            { label: "Invitation link", value: invited.invitation.acceptUrl },
            { label: "Invitation token", value: invited.invitation.token },
          ]}
        />
      )}
      {editing && (
        <UserForm
          path={`${props.base}/users`}
          user={editing === "new" ? null : editing}
          roles={props.roles}
          groups={props.groups}
          onClose={() => setEditing(null)}
          onSaved={(answer) => {
            setEditing(null);
            if (answer && "invitation" in answer) setInvited(answer as Invited);
            props.users.reload();
          }}
        />
      )}
    </Section>
  );
}

function UserForm(props: {
  path: string;
  user: User | null;
  roles: Role[];
  groups: GroupRow[];
  onClose: () => void;
  onSaved: (answer: User | Invited) => void;
}) {
  const { user } = props;
  const [email, setEmail] = useState("");
  const [displayName, setDisplayName] = useState(user?.displayName ?? "");
  const [roleIds, setRoleIds] = useState<string[]>(user?.roleIds ?? []);
  const [groupIds, setGroupIds] = useState<string[]>(user?.groupIds ?? []);
  const { errors, failure, busy, submit } = useSubmission();
  const title = user ? `Edit ${user.email}` : "Invite user";

  async function save(event: FormEvent) {
    event.preventDefault();
    await submit(async () => {
      const answer = user
        ? await patch<User>(`${props.path}/${user.id}`, { displayName, roleIds, groupIds })
        : await post<Invited>(props.path, {
            email,
            displayName: displayName.trim() || null,
            roleIds,
            groupIds,
          });
      props.onSaved(answer);
    });
  }

  return (
    <Modal opened onClose={props.onClose} title={title}>
      <form onSubmit={save} aria-label={title}>
        <Stack>
          <Failure message={Object.keys(errors).length > 0 ? null : failure} />
          {!user && (
            <TextInput
              label="Email"
              required
              value={email}
              error={errors["/email"]}
              onChange={(e) => setEmail(e.currentTarget.value)}
            />
          )}
          <TextInput
            label="Display name"
            value={displayName}
            error={errors["/displayName"]}
            onChange={(e) => setDisplayName(e.currentTarget.value)}
          />
          <MultiSelect
            label="Roles"
            data={props.roles.map((r) => ({ value: r.id, label: r.name }))}
            value={roleIds}
            onChange={setRoleIds}
            error={errors["/roleIds"]}
          />
          <MultiSelect
            label="Groups"
            data={props.groups.map((g) => ({ value: g.id, label: g.name }))}
            value={groupIds}
            onChange={setGroupIds}
            error={errors["/groupIds"]}
          />
          <Button type="submit" loading={busy}>
            {user ? "Save user" : "Send invitation"}
          </Button>
        </Stack>
      </form>
    </Modal>
  );
}
