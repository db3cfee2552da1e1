import {
  ActionIcon,
  Badge,
  Button,
  Group,
  Modal,
  Select,
  Stack,
  Text,
  TextInput,
  Textarea,
} from "@mantine/core";
import { useState } from "react";
import type { FormEvent } from "react";

import { patch, post } from "../../api";
import type { Page } from "../../api";
import type { Fetched } from "../../useFetched";
import { Failure, useSubmission } from "../../useSubmission";
import { EditButton, Section } from "./Section";

interface Mapping {
  attribute: string;
  userField: string;
}

export interface IdentityProvider {
  id: string;
  name: string;
  entityId: string;
  ssoUrl: string;
  certificateSubject: string | null;
  mappings: Mapping[];
  mappingCount: number;
  active: boolean;
}

const USER_FIELDS = [
  { value: "email", label: "email" },
  { value: "displayName", label: "display name" },
  { value: "groups", label: "groups (values are group names)" },
];

/** SAML identity providers with their attribute mappings; the seed's rule: without a
 * mapping a configuration is inactive, and shown so. */
export function IdentityProvidersSection(props: {
  base: string;
  providers: Fetched<Page<IdentityProvider>>;
  allowed: boolean;
}) {
  const [editing, setEditing] = useState<IdentityProvider | "new" | null>(null);
  return (
    <Section<IdentityProvider>
      title="Identity providers"
      fetched={props.providers}
      add="Add identity provider"
      permission="idp.manage"
      allowed={props.allowed}
      onAdd={() => setEditing("new")}
      empty="No identity provider configured."
      columns={["Configuration", "Entity id", "Mappings", "State", ""]}
      row={(p) => [
        p.name,
        p.entityId,
        p.mappingCount,
        p.active ? (
          <Badge color="green">active</Badge>
        ) : (
          <Badge color="gray">inactive: no mapping</Badge>
        ),
        props.allowed && <EditButton what={p.name} onClick={() => setEditing(p)} />,
      ]}
    >
      {editing && (
        <ProviderForm
          path={`${props.base}/identity-providers`}
          provider={editing === "new" ? null : editing}
          onClose={() => setEditing(null)}
          onSaved={() => {
            setEditing(null);
            props.providers.reload();
          }}
        />
      )}
    </Section>
  );
}

function ProviderForm(props: {
  path: string;
  provider: IdentityProvider | null;
  onClose: () => void;
  onSaved: () => void;
}) {
  const { provider } = props;
  const [name, setName] = useState(provider?.name ?? "");
  const [entityId, setEntityId] = useState(provider?.entityId ?? "");
  const [ssoUrl, setSsoUrl] = useState(provider?.ssoUrl ?? "");
  // the list does not carry the PEM: an edit keeps it unless a new one is pasted
  const [certificate, setCertificate] = useState("");
  const [mappings, setMappings] = useState<Mapping[]>(provider?.mappings ?? []);
  const { errors, failure, busy, submit } = useSubmission();
  const title = provider ? `Edit identity provider ${provider.name}` : "Add identity provider";

  function change(index: number, mapping: Partial<Mapping>) {
    setMappings(mappings.map((m, i) => (i === index ? { ...m, ...mapping } : m)));
  }

  async function save(event: FormEvent) {
    event.preventDefault();
    await submit(async () => {
      const body = { name, entityId, ssoUrl, certificate, mappings };
      if (provider) {
        const { certificate: _, ...kept } = body;
        await patch(`${props.path}/${provider.id}`, certificate ? body : kept);
      } else await post(props.path, body);
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
          <TextInput
            label="Entity id"
            required
            value={entityId}
            error={errors["/entityId"]}
            onChange={(e) => setEntityId(e.currentTarget.value)}
          />
          <TextInput
            label="SSO URL"
            required
            value={ssoUrl}
            error={errors["/ssoUrl"]}
            onChange={(e) => setSsoUrl(e.currentTarget.value)}
          />
          <Textarea
            label="Signing certificate (PEM)"
            required={!provider}
            description={
              provider
                ? `Empty: the current one is kept (${provider.certificateSubject ?? "no subject"})`
                : undefined
            }
            autosize
            minRows={3}
            value={certificate}
            error={errors["/certificate"]}
            onChange={(e) => setCertificate(e.currentTarget.value)}
          />
          <Text fw={500} size="sm">
            Attribute mappings
          </Text>
          {mappings.length === 0 && (
            <Text size="sm" c="dimmed">
              No mapping: the configuration stays inactive until it has one.
            </Text>
          )}
          {mappings.map((mapping, i) => (
            <Group key={i} align="start">
              <TextInput
                label={`Attribute ${i + 1}`}
                required
                value={mapping.attribute}
                error={errors[`/mappings/${i}/attribute`]}
                onChange={(e) => change(i, { attribute: e.currentTarget.value })}
                w={300}
              />
              <Select
                label={`User field ${i + 1}`}
                data={USER_FIELDS}
                value={mapping.userField}
                onChange={(v) => v && change(i, { userField: v })}
                allowDeselect={false}
                error={errors[`/mappings/${i}/userField`]}
              />
              <ActionIcon
                mt={28}
                variant="subtle"
                color="red"
                aria-label={`Remove mapping ${i + 1}`}
                onClick={() => setMappings(mappings.filter((_, j) => j !== i))}
              >
                ×
              </ActionIcon>
            </Group>
          ))}
          <Group>
            <Button
              variant="light"
              onClick={() => setMappings([...mappings, { attribute: "", userField: "email" }])}
            >
              Add mapping
            </Button>
          </Group>
          <Button type="submit" loading={busy}>
            {provider ? "Save identity provider" : "Create identity provider"}
          </Button>
        </Stack>
      </form>
    </Modal>
  );
}
