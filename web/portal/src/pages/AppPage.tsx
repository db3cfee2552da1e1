import { Button, Group, Loader, SegmentedControl, Stack, Text, Title } from "@mantine/core";
import { lazy, Suspense, useEffect, useState } from "react";
import { useParams } from "react-router";

import { portal, portalList } from "../api";
import { KeyOnce } from "../components/KeyOnce";
import { SETTLING, SubscriptionsTable } from "../components/Subscriptions";
import { Refusal, Shown, useAction, useLoaded } from "../loading";
import type { AppWithKey, DeveloperApp, Subscription, Usage, UsageWindow } from "../types";
import { keyHint } from "./Apps";

// the charts library is most of a bundle: fetched with an app's page, never with the catalogue
const UsageCharts = lazy(() => import("../components/UsageCharts"));

/** How often a page showing a pending or provisioning subscription asks again. */
const SETTLING_POLL_MS = 3000;

export function AppPage() {
  const { appId = "" } = useParams();
  const base = `/apps/${encodeURIComponent(appId)}`;
  const app = useLoaded(() => portal<DeveloperApp>("GET", base), base);
  const [rotated, setRotated] = useState<AppWithKey | null>(null);
  const rotation = useAction();

  const rotate = () =>
    void rotation.run(async () => {
      setRotated(await portal<AppWithKey>("POST", `${base}/credentials/rotate`));
      app.reload();
    });

  return (
    <Shown loaded={app} what="the app">
      {(found) => (
        <Stack gap="lg">
          <div>
            <Title order={1}>{found.name}</Title>
            {found.description && <Text>{found.description}</Text>}
          </div>
          <Group>
            <Text>
              Key: <code>{keyHint(found)}</code>, issued{" "}
              {new Date(found.key_issued_at).toLocaleString("en-GB")}
            </Text>
            <Button variant="default" size="xs" onClick={rotate} loading={rotation.busy}>
              Rotate key
            </Button>
          </Group>
          <Refusal problem={rotation.problem} title="The key was not rotated" />
          {rotated && <KeyOnce app={rotated} onDone={() => setRotated(null)} />}
          <Subscriptions base={base} />
          <UsagePanel base={base} />
        </Stack>
      )}
    </Shown>
  );
}

function Subscriptions({ base }: { base: string }) {
  const path = `${base}/subscriptions?limit=500`;
  const subscriptions = useLoaded(() => portalList<Subscription>(path), path);
  const cancellation = useAction();
  const { reload, value } = subscriptions;
  // an administrator's decision and the gateway's provisioning happen elsewhere: while one
  // is on its way, the page asks again now and then
  const settling = value?.data.some((s) => SETTLING.has(s.status)) ?? false;
  useEffect(() => {
    if (!settling) return;
    const timer = setInterval(reload, SETTLING_POLL_MS);
    return () => clearInterval(timer);
  }, [settling, reload]);

  const cancel = (subscription: Subscription) =>
    void cancellation
      .run(() => portal("DELETE", `${base}/subscriptions/${subscription.id}`))
      .then(reload);

  return (
    <Stack gap="xs">
      <Group justify="space-between">
        <Title order={2}>Subscriptions</Title>
        <Button variant="subtle" size="xs" onClick={reload}>
          Refresh subscriptions
        </Button>
      </Group>
      <Refusal problem={cancellation.problem} title="The subscription was not cancelled" />
      <Shown loaded={subscriptions} what="the subscriptions">
        {({ data }) => (
          <SubscriptionsTable subscriptions={data} onCancel={cancel} busy={cancellation.busy} />
        )}
      </Shown>
    </Stack>
  );
}

function UsagePanel({ base }: { base: string }) {
  const [window, setWindow] = useState<UsageWindow>("1h");
  const path = `${base}/analytics?window=${window}`;
  const usage = useLoaded(() => portal<Usage>("GET", path), path);
  return (
    <Stack gap="xs">
      <Group justify="space-between">
        <Title order={2}>Usage</Title>
        <Group>
          <SegmentedControl
            aria-label="Usage window"
            value={window}
            onChange={(chosen) => setWindow(chosen as UsageWindow)}
            data={[
              { value: "1h", label: "Last hour" },
              { value: "24h", label: "Last 24 hours" },
              { value: "7d", label: "Last 7 days" },
            ]}
          />
          <Button variant="subtle" size="xs" onClick={usage.reload}>
            Refresh usage
          </Button>
        </Group>
      </Group>
      <Text size="sm" c="dimmed">
        What the gateways report for this app&apos;s active subscriptions.
      </Text>
      <Shown loaded={usage} what="the usage">
        {(found) => (
          <Suspense fallback={<Loader aria-label="Loading the charts" />}>
            <UsageCharts usage={found} />
          </Suspense>
        )}
      </Shown>
    </Stack>
  );
}
