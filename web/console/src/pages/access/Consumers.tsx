import { Button, Modal, PasswordInput, Select, Stack, TextInput } from "@mantine/core";
import { useState } from "react";
import type { FormEvent } from "react";

import { patch, post } from "../../api";
import type { Page } from "../../api";
import { CopyOnce, generated } from "../../components/CopyOnce";
import type { Fetched } from "../../useFetched";
import { Failure, useSubmission } from "../../useSubmission";
import { EditButton, Section } from "./Section";

export interface Consumer {
  id: string;
  username: string;
  description: string;
  plugins: Record<string, unknown>;
}

interface ConsumerWritten extends Consumer {
  generatedCredentials: Record<string, Record<string, string>>;
}

type Credential = "key-auth" | "basic-auth" | "none";

const CREDENTIALS = [
  { value: "key-auth", label: "API key (key-auth), generated" },
  { value: "basic-auth", label: "Username and password (basic-auth)" },
  { value: "none", label: "None for now" },
];

/** Consumers (credentials masked as the API returns them): a new one with its credential,
 * a generated key shown once. */
export function ConsumersSection(props: {
  base: string;
  consumers: Fetched<Page<Consumer>>;
  allowed: boolean;
}) {
  const [editing, setEditing] = useState<Consumer | "new" | null>(null);
  const [created, setCreated] = useState<ConsumerWritten | null>(null);
  return (
    <Section<Consumer>
      title="Consumers"
      fetched={props.consumers}
      add="Add consumer"
      permission="consumer.manage"
      allowed={props.allowed}
      onAdd={() => setEditing("new")}
      empty="No consumer yet."
      columns={["Consumer", "Description", "Credentials and plugins", ""]}
      row={(c) => [
        c.username,
        c.description,
        Object.keys(c.plugins).join(", ") || "—",
        props.allowed && <EditButton what={c.username} onClick={() => setEditing(c)} />,
      ]}
    >
      {created && Object.keys(created.generatedCredentials).length > 0 && (
        <CopyOnce
          title={`Credentials of ${created.username}`}
          values={generated(created.generatedCredentials)}
        />
      )}
      {editing && (
        <ConsumerForm
          path={`${props.base}/consumers`}
          consumer={editing === "new" ? null : editing}
          onClose={() => setEditing(null)}
          onSaved={(answer) => {
            setEditing(null);
            setCreated(answer);
            props.consumers.reload();
          }}
        />
      )}
    </Section>
  );
}

function ConsumerForm(props: {
  path: string;
  consumer: Consumer | null;
  onClose: () => void;
  onSaved: (answer: ConsumerWritten) => void;
}) {
  const { consumer } = props;
  const [username, setUsername] = useState(consumer?.username ?? "");
  const [description, setDescription] = useState(consumer?.description ?? "");
  const [credential, setCredential] = useState<Credential>("key-auth");
  const [login, setLogin] = useState("");
  const [password, setPassword] = useState("");
  const { errors, failure, busy, submit } = useSubmission();
  const title = consumer ? `Edit consumer ${consumer.username}` : "Add consumer";

  async function save(event: FormEvent) {
    event.preventDefault();
    await submit(async () => {
      if (consumer) {
        // the credentials are left as they are (not sent: kept)
        props.onSaved(
          await patch<ConsumerWritten>(`${props.path}/${consumer.id}`, { username, description }),
        );
        return;
      }
      const plugins: Record<string, unknown> = {};
      if (credential === "key-auth") plugins["key-auth"] = {};
      if (credential === "basic-auth") plugins["basic-auth"] = { username: login, password };
      props.onSaved(await post<ConsumerWritten>(props.path, { username, description, plugins }));
    });
  }

  return (
    <Modal opened onClose={props.onClose} title={title}>
      <form onSubmit={save} aria-label={title}>
        <Stack>
          <Failure message={Object.keys(errors).length > 0 ? null : failure} />
          <TextInput
            label="Username"
            required
            value={username}
            error={errors["/username"]}
            onChange={(e) => setUsername(e.currentTarget.value)}
          />
          <TextInput
            label="Description"
            value={description}
            error={errors["/description"]}
            onChange={(e) => setDescription(e.currentTarget.value)}
          />
          {!consumer && (
            <Select
              label="Credential"
              data={CREDENTIALS}
              value={credential}
              onChange={(v) => v && setCredential(v as Credential)}
              allowDeselect={false}
              error={errors["/plugins"]}
            />
          )}
          {!consumer && credential === "basic-auth" && (
            <>
              <TextInput
                label="Login"
                required
                value={login}
                error={errors["/plugins/basic-auth/username"]}
                onChange={(e) => setLogin(e.currentTarget.value)}
              />
              <PasswordInput
                label="Consumer password"
                required
                value={password}
                error={errors["/plugins/basic-auth/password"]}
                onChange={(e) => setPassword(e.currentTarget.value)}
              />
            </>
          )}
          <Button type="submit" loading={busy}>
            {consumer ? "Save consumer" : "Create consumer"}
          </Button>
        </Stack>
      </form>
    </Modal>
  );
}
