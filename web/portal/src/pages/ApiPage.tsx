import { Badge, Group, Loader, Stack, Text, Title } from "@mantine/core";
import { lazy, Suspense } from "react";
import { useParams } from "react-router";

import { portal } from "../api";
import { useSession } from "../auth";
import { SubscribePanel } from "../components/SubscribePanel";
import { Shown, useLoaded } from "../loading";
import type { ApiDetail } from "../types";
import { VisibilityBadge } from "./Catalogue";

// Redoc is most of a bundle: fetched when an API's page is opened, never with the catalogue
const ApiReference = lazy(() => import("../components/ApiReference"));

export function ApiPage() {
  const { apiId = "" } = useParams();
  const { me } = useSession();
  const api = useLoaded(
    () => portal<ApiDetail>("GET", `/apis/${encodeURIComponent(apiId)}`),
    `${apiId} ${me?.id ?? "anonymous"}`,
  );
  return (
    <Shown loaded={api} what="the API">
      {(found) => (
        <Stack gap="md">
          <Group gap="sm">
            <Title order={1}>{found.title}</Title>
            <Badge variant="outline">{found.version}</Badge>
            <VisibilityBadge visibility={found.visibility} />
          </Group>
          {found.overview && <Text>{found.overview}</Text>}
          <SubscribePanel node={{ bundle: "api", id: found.id, title: found.title }} />
          <Title order={2}>Reference</Title>
          {found.documentation ? (
            <Suspense fallback={<Loader aria-label="Loading the API reference" />}>
              <ApiReference document={found.documentation} />
            </Suspense>
          ) : (
            <Text c="dimmed">This API was published without an OpenAPI document.</Text>
          )}
        </Stack>
      )}
    </Shown>
  );
}
