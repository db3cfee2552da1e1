import "@mantine/charts/styles.css";

import { BarChart } from "@mantine/charts";
import { Card, Progress, SimpleGrid, Stack, Text, Title } from "@mantine/core";
import type { ReactNode } from "react";

import type { Usage, UsageWindow } from "../types";

const WINDOW_NAMES: Record<UsageWindow, string> = {
  "1h": "the last hour",
  "24h": "the last 24 hours",
  "7d": "the last 7 days",
};

const milliseconds = (value: number | null) => (value === null ? "–" : `${value.toFixed(1)} ms`);

/** A chart as one image to assistive technology, named by the figures it draws. */
function Figure(props: { title: string; says: string; children: ReactNode }) {
  return (
    <Card withBorder padding="sm">
      <Title order={3} size="h5" mb="xs">
        {props.title}
      </Title>
      <figure role="img" aria-label={props.says} style={{ margin: 0 }}>
        {props.children}
      </figure>
    </Card>
  );
}

/** An app's usage over a window (``GET /apps/{app}/analytics``): its requests and errors, the
 * response time's percentiles, and the quota closest to being spent. Loaded with the app's
 * page only (the charts library is most of a bundle). */
export default function UsageCharts({ usage }: { usage: Usage }) {
  const window = WINDOW_NAMES[usage.window];
  if (usage.requests === 0) {
    return <Text c="dimmed">No requests from this app in {window}.</Text>;
  }
  const { p50, p95, p99 } = usage.latency_ms;
  const { limit, used } = usage.quota;
  const counts = `${usage.requests} requests, ${usage.errors} errors in ${window}`;
  const latency = `response time p50 ${milliseconds(p50)}, p95 ${milliseconds(p95)}, p99 ${milliseconds(p99)}`;
  return (
    <Stack gap="md">
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        <Figure title="Requests and errors" says={counts}>
          <BarChart
            h={220}
            data={[
              { measure: "Requests", count: usage.requests },
              { measure: "Errors", count: usage.errors },
            ]}
            dataKey="measure"
            series={[{ name: "count", label: "Count", color: "blue.6" }]}
            withTooltip={false}
          />
        </Figure>
        <Figure title="Response time (ms)" says={latency}>
          <BarChart
            h={220}
            data={[
              { percentile: "p50", ms: p50 ?? 0 },
              { percentile: "p95", ms: p95 ?? 0 },
              { percentile: "p99", ms: p99 ?? 0 },
            ]}
            dataKey="percentile"
            series={[{ name: "ms", label: "Milliseconds", color: "teal.6" }]}
            withTooltip={false}
          />
        </Figure>
      </SimpleGrid>
      {limit !== null && used !== null && (
        <Stack gap={4}>
          <Text size="sm">
            Quota: {used.toLocaleString("en")} of {limit.toLocaleString("en")} requests used in the
            current window
          </Text>
          <Progress
            value={limit > 0 ? Math.min(100, (used / limit) * 100) : 100}
            aria-label="Quota used"
          />
        </Stack>
      )}
    </Stack>
  );
}
