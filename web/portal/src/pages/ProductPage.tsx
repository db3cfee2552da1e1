import { Anchor, Group, List, Stack, Text, Title } from "@mantine/core";
import { Link, useParams } from "react-router";

import { portal } from "../api";
import { useSession } from "../auth";
import { SubscribePanel } from "../components/SubscribePanel";
import { Shown, useLoaded } from "../loading";
import type { Product } from "../types";
import { quotaText, VisibilityBadge } from "./Catalogue";

export function ProductPage() {
  const { productId = "" } = useParams();
  const { me } = useSession();
  const product = useLoaded(
    () => portal<Product>("GET", `/products/${encodeURIComponent(productId)}`),
    `${productId} ${me?.id ?? "anonymous"}`,
  );
  return (
    <Shown loaded={product} what="the product">
      {(found) => (
        <Stack gap="md">
          <Group gap="sm">
            <Title order={1}>{found.title}</Title>
            <VisibilityBadge visibility={found.visibility} />
          </Group>
          {found.description && <Text>{found.description}</Text>}
          <Text>
            <strong>Quota:</strong> {quotaText(found.quota)}
          </Text>
          <Title order={2}>APIs in this product</Title>
          {found.apis.length === 0 ? (
            <Text c="dimmed">None of its APIs is published to you.</Text>
          ) : (
            <List aria-label="APIs in this product">
              {found.apis.map((api) => (
                <List.Item key={api.id}>
                  <Anchor component={Link} to={`/apis/${api.id}`}>
                    {api.title}
                  </Anchor>{" "}
                  {api.version}
                </List.Item>
              ))}
            </List>
          )}
          <SubscribePanel node={{ bundle: "product", id: found.id, title: found.title }} />
        </Stack>
      )}
    </Shown>
  );
}
