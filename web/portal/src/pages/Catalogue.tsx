import {
  Anchor,
  Badge,
  Group,
  Pagination,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from "@mantine/core";
import { useDebouncedValue } from "@mantine/hooks";
import { useState } from "react";
import type { ReactNode } from "react";
import { Link } from "react-router";

import { listQuery, portalList } from "../api";
import type { Listed } from "../api";
import { useSession } from "../auth";
import { Shown, useLoaded } from "../loading";
import type { ApiSummary, Product, Visibility } from "../types";

const PAGE_SIZE = 20;

const VISIBILITY: Record<Visibility, string> = {
  public: "Public",
  internal: "Signed-in developers",
  organisation: "Your organisation",
};

export function VisibilityBadge({ visibility }: { visibility: Visibility }) {
  return (
    <Badge variant="light" color={visibility === "public" ? "gray" : "grape"}>
      {VISIBILITY[visibility]}
    </Badge>
  );
}

/** One paginated section of the catalogue, as a table named ``label``. */
function Section<T extends { id: string }>(props: {
  label: string;
  bundle: "apis" | "products";
  search: string;
  columns: string[];
  cells: (item: T) => ReactNode[];
  empty: string;
}) {
  const { me } = useSession();
  const [page, setPage] = useState(1);
  const path = `/${props.bundle}${listQuery(page, PAGE_SIZE, { search: props.search })}`;
  // what a caller may see depends on who it is: a sign-in or sign-out asks again
  const loaded = useLoaded(() => portalList<T>(path), `${path} ${me?.id ?? "anonymous"}`);
  return (
    <Stack gap="xs">
      <Title order={2}>{props.label}</Title>
      <Shown loaded={loaded} what={props.label}>
        {(listed: Listed<T>) =>
          listed.data.length === 0 ? (
            <Text c="dimmed">{props.empty}</Text>
          ) : (
            <>
              <Table
                aria-label={props.label}
                striped
                data={{ head: props.columns, body: listed.data.map(props.cells) }}
              />
              {listed.meta.pages > 1 && (
                <Pagination
                  total={listed.meta.pages}
                  value={page}
                  onChange={setPage}
                  getControlProps={(control) => ({
                    "aria-label": `${props.label}: ${control} page`,
                  })}
                  getItemProps={(n) => ({
                    "aria-label": `${props.label}: page ${n}`,
                  })}
                />
              )}
            </>
          )
        }
      </Shown>
    </Stack>
  );
}

/** The published APIs and products the visitor may see: public ones to everyone, internal
 * ones to signed-in developers, an organisation's to its members (the API decides). */
export function CataloguePage() {
  const { me } = useSession();
  const [search, setSearch] = useState("");
  const [searched] = useDebouncedValue(search, 250);
  return (
    <Stack gap="lg">
      <Group justify="space-between" align="end">
        <div>
          <Title order={1}>Catalogue</Title>
          <Text c="dimmed">
            {me
              ? "The APIs and products published to you."
              : "Public APIs and products. Sign in to see those published to developers and your organisation."}
          </Text>
        </div>
        <TextInput
          label="Search the catalogue"
          placeholder="Title contains…"
          value={search}
          onChange={(event) => setSearch(event.currentTarget.value)}
          w={280}
        />
      </Group>
      <Section<ApiSummary>
        key={`apis ${searched}`}
        label="APIs"
        bundle="apis"
        search={searched}
        columns={["API", "Version", "Overview", "Visibility"]}
        cells={(api) => [
          <Anchor component={Link} to={`/apis/${api.id}`}>
            {api.title}
          </Anchor>,
          api.version,
          <Text size="sm" lineClamp={2}>
            {api.overview}
          </Text>,
          <VisibilityBadge visibility={api.visibility} />,
        ]}
        empty={searched ? "No API matches this search." : "No API is published here yet."}
      />
      <Section<Product>
        key={`products ${searched}`}
        label="Products"
        bundle="products"
        search={searched}
        columns={["Product", "APIs", "Quota", "Visibility"]}
        cells={(product) => [
          <Anchor component={Link} to={`/products/${product.id}`}>
            {product.title}
          </Anchor>,
          product.apis.map((api) => api.title).join(", "),
          quotaText(product.quota),
          <VisibilityBadge visibility={product.visibility} />,
        ]}
        empty={searched ? "No product matches this search." : "No product is published here yet."}
      />
    </Stack>
  );
}

/** "1,000 per day, per app" ("per 2 hours, per developer"), or "Unlimited". */
export function quotaText(quota: Product["quota"]): string {
  if (!quota || quota.limit < 0) return "Unlimited";
  const unit =
    quota.interval === 1 ? quota.interval_unit : `${quota.interval} ${quota.interval_unit}s`;
  return `${quota.limit.toLocaleString("en")} per ${unit}, per ${quota.key_scope ?? "app"}`;
}
