import {
  Button,
  Group,
  Modal,
  NumberInput,
  Select,
  Stack,
  TextInput,
  Textarea,
} from "@mantine/core";
import { useState } from "react";
import type { FormEvent } from "react";

import { saveItem } from "../api";
import { ApiPicker } from "../components/ApiPicker";
import { Failure, useSubmission } from "../useSubmission";

export interface Quota {
  limit: number;
  interval: number;
  interval_unit: string;
  key_scope: string;
}

export interface Product {
  id: string;
  name: string;
  displayName: string;
  description: string;
  apiIds: string[];
  quota: Quota | null;
  environments: string[];
}

type QuotaKind = "none" | "unlimited" | "limited";

const QUOTA_KINDS = [
  { value: "limited", label: "Limited" },
  { value: "unlimited", label: "Unlimited" },
  { value: "none", label: "None: traffic through the product is refused" },
];
const UNITS = ["second", "minute", "hour", "day", "month"];
const SCOPES = [
  { value: "app", label: "each app" },
  { value: "developer", label: "each developer, across their apps" },
];

/** The quota the form's fields make (a limit of -1 is the API's "unlimited"). */
export function quotaOf(
  kind: QuotaKind,
  fields: { limit: number | string; interval: number | string; unit: string; scope: string },
): Quota | null {
  if (kind === "none") return null;
  return {
    limit: kind === "unlimited" ? -1 : Number(fields.limit),
    interval: Number(fields.interval),
    interval_unit: fields.unit,
    key_scope: fields.scope,
  };
}

/** Create a product, or change one: its name, APIs and quota. */
export function ProductForm(props: {
  path: string;
  product: Product | null;
  apiNames: Record<string, string>;
  onClose: () => void;
  onSaved: () => void;
}) {
  const { product } = props;
  const [name, setName] = useState(product?.name ?? "");
  const [displayName, setDisplayName] = useState(product?.displayName ?? "");
  const [description, setDescription] = useState(product?.description ?? "");
  const [apiIds, setApiIds] = useState<string[]>(product?.apiIds ?? []);
  const quota = product?.quota ?? null;
  const [kind, setKind] = useState<QuotaKind>(
    product && !quota ? "none" : quota?.limit === -1 ? "unlimited" : "limited",
  );
  const [limit, setLimit] = useState<number | string>(
    quota && quota.limit > 0 ? quota.limit : 1000,
  );
  const [every, setEvery] = useState<number | string>(quota?.interval ?? 1);
  const [unit, setUnit] = useState(quota?.interval_unit ?? "day");
  const [scope, setScope] = useState(quota?.key_scope ?? "app");
  const { errors, failure, busy, submit } = useSubmission();
  const title = product ? `Edit product ${product.name}` : "Add product";

  async function save(event: FormEvent) {
    event.preventDefault();
    const body = {
      name,
      displayName: displayName.trim() || null,
      description,
      apiIds,
      quota: quotaOf(kind, { limit, interval: every, unit, scope }),
    };
    await submit(async () => {
      await saveItem(props.path, product, body);
      props.onSaved();
    });
  }

  const fieldErrors = Object.keys(errors).length > 0;
  return (
    <Modal opened onClose={props.onClose} title={title} size="lg">
      <form onSubmit={save} aria-label={title}>
        <Stack>
          <Failure message={fieldErrors ? null : failure} />
          <TextInput
            label="Name"
            required
            value={name}
            error={errors["/name"]}
            onChange={(e) => setName(e.currentTarget.value)}
          />
          <TextInput
            label="Display name"
            value={displayName}
            error={errors["/displayName"]}
            onChange={(e) => setDisplayName(e.currentTarget.value)}
          />
          <Textarea
            label="Description"
            value={description}
            error={errors["/description"]}
            onChange={(e) => setDescription(e.currentTarget.value)}
          />
          <ApiPicker
            value={apiIds}
            onChange={setApiIds}
            known={props.apiNames}
            error={errors["/apiIds"] ?? errors["/apiIds/0"]}
          />
          <Select
            label="Quota"
            data={QUOTA_KINDS}
            value={kind}
            onChange={(v) => v && setKind(v as QuotaKind)}
            allowDeselect={false}
            error={errors["/quota"]}
          />
          {kind !== "none" && (
            <Group align="start">
              {kind === "limited" && (
                <NumberInput
                  label="Requests"
                  min={1}
                  value={limit}
                  onChange={setLimit}
                  error={errors["/quota/limit"]}
                  w={140}
                />
              )}
              <NumberInput
                label="Every"
                min={1}
                value={every}
                onChange={setEvery}
                error={errors["/quota/interval"]}
                w={90}
              />
              <Select
                label="Unit"
                data={UNITS}
                value={unit}
                onChange={(v) => v && setUnit(v)}
                allowDeselect={false}
                w={120}
              />
              <Select
                label="Counted for"
                data={SCOPES}
                value={scope}
                onChange={(v) => v && setScope(v)}
                allowDeselect={false}
                w={240}
              />
            </Group>
          )}
          <Button type="submit" loading={busy}>
            {product ? "Save product" : "Create product"}
          </Button>
        </Stack>
      </form>
    </Modal>
  );
}
