import { Badge, Button, Group, Modal, Select, Stack, Text, TextInput, Title } from "@mantine/core";
import { useState } from "react";
import type { FormEvent } from "react";

import { post, remove } from "../api";
import type { Page } from "../api";
import { useAuth } from "../auth";
import { FetchedTable } from "../components/DataTable";
import { useApiNames } from "../useApiNames";
import { useFetched } from "../useFetched";
import { Failure, useSubmission } from "../useSubmission";
import { DeveloperApps } from "./DeveloperApps";
import type { Developer } from "./DeveloperApps";
import type { Environment } from "./Environments";
import { ProductForm } from "./ProductForm";
import type { Product, Quota } from "./ProductForm";

/** The quota as the gateway enforces it: "1,000 per 1 day, per app"; -1 is unlimited. */
export function quotaText(quota: Quota | null): string {
  if (!quota) return "no quota: traffic refused";
  if (quota.limit === -1) return "unlimited";
  const unit =
    quota.interval === 1 ? quota.interval_unit : `${quota.interval} ${quota.interval_unit}s`;
  return `${quota.limit.toLocaleString("en")} per ${unit}, per ${quota.key_scope}`;
}

/** What is sold (products, their APIs and quotas, where they are deployed) and to whom
 * (developers and their apps). */
export function ProductsPage() {
  const { org, can } = useAuth();
  const base = `/api/orgs/${org!.id}`;
  const products = useFetched<Page<Product>>(`${base}/products?size=100`);
  const developers = useFetched<Page<Developer>>(`${base}/developers?size=100`);
  const envs = useFetched<Page<Environment>>(`${base}/envs?size=100`);
  const apiNames = useApiNames(base, products.data?.items.flatMap((p) => p.apiIds) ?? []);
  const envName = (id: string) => envs.data?.items.find((e) => e.id === id)?.name ?? id;
  const [editing, setEditing] = useState<Product | "new" | null>(null);
  const [deploying, setDeploying] = useState<Product | null>(null);
  const [addingDeveloper, setAddingDeveloper] = useState(false);
  const [appsOf, setAppsOf] = useState<Developer | null>(null);
  const manages = can("product.manage");
  const managesDevelopers = can("developer.manage");
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>Products</Title>
        <Button disabled={!manages} onClick={() => setEditing("new")}>
          Add product
        </Button>
      </Group>
      {!manages && <Text c="dimmed">Changing products needs the product.manage permission.</Text>}
      <FetchedTable
        fetched={products}
        label="Products"
        empty="No product yet: a product sells APIs with a quota to the apps of developers."
        columns={["Product", "APIs", "Quota", "Deployed in", ""]}
        rowKey={(product) => product.id}
        row={(product) => [
          product.displayName || product.name,
          <Group gap={4}>
            {product.apiIds.map((id) => (
              <Badge key={id} variant="light" tt="none">
                {apiNames[id] ?? "…"}
              </Badge>
            ))}
          </Group>,
          quotaText(product.quota),
          product.environments.map(envName).join(", ") || "—",
          manages && (
            <Group gap={4}>
              <Button
                size="xs"
                variant="subtle"
                aria-label={`Edit ${product.name}`}
                onClick={() => setEditing(product)}
              >
                Edit
              </Button>
              <Button
                size="xs"
                variant="light"
                aria-label={`Deploy ${product.name}`}
                onClick={() => setDeploying(product)}
              >
                Deploy
              </Button>
            </Group>
          ),
        ]}
      />
      <Group justify="space-between">
        <Title order={3}>Developers</Title>
        <Button disabled={!managesDevelopers} onClick={() => setAddingDeveloper(true)}>
          Add developer
        </Button>
      </Group>
      {!managesDevelopers && (
        <Text c="dimmed">Adding a developer needs the developer.manage permission.</Text>
      )}
      <FetchedTable
        fetched={developers}
        label="Developers"
        empty="No developer yet: add one, then give their apps products and credentials."
        columns={["Name", "Email", "Status", "Apps", ""]}
        rowKey={(developer) => developer.id}
        row={(d) => [
          `${d.firstName} ${d.lastName}`,
          d.email,
          d.status,
          d.appCount,
          <Button
            size="xs"
            variant="light"
            aria-label={`Apps of ${d.firstName} ${d.lastName}`}
            onClick={() => setAppsOf(d)}
          >
            Apps
          </Button>,
        ]}
      />
      {editing && (
        <ProductForm
          path={`${base}/products`}
          product={editing === "new" ? null : editing}
          apiNames={apiNames}
          onClose={() => setEditing(null)}
          onSaved={() => {
            setEditing(null);
            products.reload();
          }}
        />
      )}
      {deploying && envs.data && (
        <DeployProduct
          base={base}
          product={deploying}
          environments={envs.data.items}
          onClose={() => setDeploying(null)}
          onChanged={products.reload}
        />
      )}
      {addingDeveloper && (
        <AddDeveloper
          path={`${base}/developers`}
          onClose={() => setAddingDeveloper(false)}
          onAdded={() => {
            setAddingDeveloper(false);
            developers.reload();
          }}
        />
      )}
      {appsOf && envs.data && products.data && (
        <DeveloperApps
          base={base}
          developer={appsOf}
          environments={envs.data.items}
          products={products.data.items}
          allowed={managesDevelopers}
          onClose={() => setAppsOf(null)}
          onChanged={developers.reload}
        />
      )}
    </Stack>
  );
}

/** Where the product's quota applies: deployed to an environment, its gateways meter it. */
function DeployProduct(props: {
  base: string;
  product: Product;
  environments: Environment[];
  onClose: () => void;
  onChanged: () => void;
}) {
  const [deployedIn, setDeployedIn] = useState(props.product.environments);
  const [envId, setEnvId] = useState<string | null>(
    props.environments.find((e) => !deployedIn.includes(e.id))?.id ?? null,
  );
  const { failure, busy, submit } = useSubmission();
  const path = (id: string) => `${props.base}/envs/${id}/products/${props.product.id}/deploy`;
  const title = `Deploy ${props.product.name}`;

  return (
    <Modal opened onClose={props.onClose} title={title}>
      <Stack>
        <Failure message={failure} />
        {deployedIn.length === 0 && <Text>Not deployed anywhere yet.</Text>}
        {props.environments
          .filter((e) => deployedIn.includes(e.id))
          .map((e) => (
            <Group key={e.id} justify="space-between">
              <Text>Deployed in {e.name}</Text>
              <Button
                size="xs"
                variant="subtle"
                color="red"
                loading={busy}
                aria-label={`Undeploy from ${e.name}`}
                onClick={() =>
                  submit(async () => {
                    await remove(path(e.id));
                    setDeployedIn(deployedIn.filter((id) => id !== e.id));
                    props.onChanged();
                  })
                }
              >
                Undeploy
              </Button>
            </Group>
          ))}
        <Group align="end">
          <Select
            label="Target environment"
            data={props.environments
              .filter((e) => !deployedIn.includes(e.id))
              .map((e) => ({ value: e.id, label: e.name }))}
            value={envId}
            onChange={setEnvId}
            allowDeselect={false}
            w={220}
          />
          <Button
            disabled={!envId}
            loading={busy}
            onClick={() =>
              submit(async () => {
                await post(path(envId!), {});
                setDeployedIn([...deployedIn, envId!]);
                setEnvId(null);
                props.onChanged();
              })
            }
          >
            Deploy to environment
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}

function AddDeveloper(props: { path: string; onClose: () => void; onAdded: () => void }) {
  const [firstName, setFirstName] = useState("");
  const [lastName, setLastName] = useState("");
  const [email, setEmail] = useState("");
  const { errors, failure, busy, submit } = useSubmission();

  async function create(event: FormEvent) {
    event.preventDefault();
    await submit(async () => {
      await post(props.path, { firstName, lastName, email });
      props.onAdded();
    });
  }

  return (
    <Modal opened onClose={props.onClose} title="Add developer">
      <form onSubmit={create} aria-label="Add developer">
        <Stack>
          <Failure message={Object.keys(errors).length > 0 ? null : failure} />
          <TextInput
            label="First name"
            required
            value={firstName}
            error={errors["/firstName"]}
            onChange={(e) => setFirstName(e.currentTarget.value)}
          />
          <TextInput
            label="Last name"
            required
            value={lastName}
            error={errors["/lastName"]}
            onChange={(e) => setLastName(e.currentTarget.value)}
          />
          <TextInput
            label="Email"
            required
            value={email}
            error={errors["/email"]}
            onChange={(e) => setEmail(e.currentTarget.value)}
          />
          <Button type="submit" loading={busy}>
            Create developer
          </Button>
        </Stack>
      </form>
    </Modal>
  );
}
