import { BarChart, LineChart, PieChart } from "@mantine/charts";
import {
  Alert,
  Button,
  Card,
  Group,
  Loader,
  Modal,
  Select,
  SimpleGrid,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from "@mantine/core";
import { useState } from "react";
import type { FormEvent } from "react";

import { post } from "../api";
import type { Page } from "../api";
import { useAuth } from "../auth";
import { useFetched } from "../useFetched";
import { Failure, useSubmission } from "../useSubmission";
import { dimensionValue, groupLabel } from "./widgetLabels";

type Chart = "line" | "bar" | "pie" | "table" | "number";

interface Widget {
  id: string;
  name: string;
  metric: string;
  aggregation: string;
  dimensions: string[];
  chart: Chart;
}

interface Row {
  dimensions?: Record<string, unknown>;
  timeBucket?: string;
  value: number | null;
}

interface WidgetData {
  data: Row[];
  message?: string;
  value: number | null;
}

const METRICS = [
  "requests-count",
  "requests-per-second",
  "response-time",
  "upstream-response-time",
  "request-size",
  "response-size",
  "total-transfer-size",
  "quota-usage",
];
const AGGREGATIONS = ["SUM", "AVG", "MIN", "MAX", "P50", "P95", "P99"];
const CHARTS: Chart[] = ["line", "bar", "pie", "number", "table"];
const DIMENSIONS = [
  "",
  "env_name",
  "api_name",
  "route_name",
  "response_status_code",
  "app_name",
  "consumer",
];
const COLORS = ["blue.6", "teal.6", "orange.6", "grape.6", "red.6", "cyan.6", "lime.6", "pink.6"];

const group = groupLabel;

/** Rows of {timeBucket, dimensions, value} as one point per bucket with a key per group. */
function series(rows: Row[]) {
  const groups = [...new Set(rows.map(group))];
  const byBucket = new Map<string, Record<string, string | number>>();
  for (const row of rows) {
    const bucket = row.timeBucket ?? "";
    const point = byBucket.get(bucket) ?? { bucket: new Date(bucket).toLocaleTimeString() };
    point[group(row)] = row.value ?? 0;
    byBucket.set(bucket, point);
  }
  return {
    data: [...byBucket.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, point]) => point),
    series: groups.map((name, i) => ({ name, color: COLORS[i % COLORS.length] })),
  };
}

function WidgetView({ widget, orgId }: { widget: Widget; orgId: string }) {
  const found = useFetched<WidgetData>(`/api/orgs/${orgId}/widgets/${widget.id}/data`);
  let body;
  if (found.error) body = <Alert color="red">{found.error.message}</Alert>;
  else if (!found.data) body = <Loader aria-label={`Loading ${widget.name}`} />;
  else if (found.data.message) body = <Text c="dimmed">{found.data.message}</Text>;
  else if (widget.chart === "number")
    body = (
      <Text fz={40} fw={700} aria-label={`${widget.name}: value`}>
        {found.data.value ?? 0}
      </Text>
    );
  else if (widget.chart === "pie")
    body = (
      <PieChart
        withLabels
        withLegend
        withTooltip
        data={found.data.data.map((row, i) => ({
          name: group(row),
          value: row.value ?? 0,
          color: COLORS[i % COLORS.length],
        }))}
      />
    );
  else if (widget.chart === "table") {
    const rows = found.data.data;
    const timed = rows.some((row) => row.timeBucket);
    body = (
      <Table aria-label={`${widget.name} data`}>
        <Table.Thead>
          <Table.Tr>
            {timed && <Table.Th>Time</Table.Th>}
            {widget.dimensions.map((dimension) => (
              <Table.Th key={dimension}>{dimension}</Table.Th>
            ))}
            <Table.Th>Value</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {rows.map((row, i) => (
            <Table.Tr key={i}>
              {timed && (
                <Table.Td>
                  {row.timeBucket ? new Date(row.timeBucket).toLocaleString() : ""}
                </Table.Td>
              )}
              {widget.dimensions.map((dimension) => (
                <Table.Td key={dimension}>
                  {dimensionValue(dimension, row.dimensions?.[dimension])}
                </Table.Td>
              ))}
              <Table.Td>{row.value ?? "—"}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    );
  } else {
    const plotted = series(found.data.data);
    const Chart = widget.chart === "bar" ? BarChart : LineChart;
    body = <Chart h={220} dataKey="bucket" data={plotted.data} series={plotted.series} />;
  }
  return (
    <Card withBorder role="region" aria-label={widget.name}>
      <Title order={4}>{widget.name}</Title>
      <Text size="xs" c="dimmed" mb="sm">
        {widget.aggregation} of {widget.metric}
        {widget.dimensions.length > 0 && ` by ${widget.dimensions.join(", ")}`}
      </Text>
      {body}
    </Card>
  );
}

/** Custom widgets, each its own chart; a widget whose filters match nothing says so. */
export function AnalyticsPage() {
  const { org, can } = useAuth();
  const widgets = useFetched<Page<Widget>>(`/api/orgs/${org!.id}/widgets?size=100`);
  const [adding, setAdding] = useState(false);
  if (!can("analytics.read")) return <Text>Analytics needs the analytics.read permission.</Text>;
  const manages = can("analytics.manage");
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>Analytics</Title>
        <Button disabled={!manages} onClick={() => setAdding(true)}>
          Add widget
        </Button>
      </Group>
      {!manages && <Text c="dimmed">Adding a widget needs the analytics.manage permission.</Text>}
      {widgets.error && <Alert color="red">{widgets.error.message}</Alert>}
      {!widgets.data && <Loader aria-label="Loading widgets" />}
      {widgets.data && widgets.data.items.length === 0 && (
        <Text>
          No widget yet: add one to chart the traffic through your gateways (requests, response
          times, sizes) over the last hour, day or week, grouped by API, app, status…
        </Text>
      )}
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        {widgets.data?.items.map((widget) => (
          <WidgetView key={widget.id} widget={widget} orgId={org!.id} />
        ))}
      </SimpleGrid>
      <AddWidget
        opened={adding}
        path={`/api/orgs/${org!.id}/widgets`}
        onClose={() => setAdding(false)}
        onAdded={() => {
          setAdding(false);
          widgets.reload();
        }}
      />
    </Stack>
  );
}

function AddWidget(props: {
  opened: boolean;
  path: string;
  onClose: () => void;
  onAdded: () => void;
}) {
  const [name, setName] = useState("");
  const [metric, setMetric] = useState("requests-count");
  const [aggregation, setAggregation] = useState("SUM");
  const [chart, setChart] = useState<Chart>("line");
  const [dimension, setDimension] = useState("");
  const [window, setWindow] = useState("1h");
  const { errors, failure, submit } = useSubmission();

  async function create(event: FormEvent) {
    event.preventDefault();
    await submit(async () => {
      await post(props.path, {
        name,
        metric,
        aggregation,
        chart,
        dimensions: dimension ? [dimension] : [],
        filters: { window },
      });
      setName("");
      props.onAdded();
    });
  }

  return (
    <Modal opened={props.opened} onClose={props.onClose} title="Add widget">
      <form onSubmit={create} aria-label="Add widget">
        <Stack>
          <Failure message={failure} />
          <TextInput
            label="Name"
            required
            value={name}
            error={errors["/name"]}
            onChange={(e) => setName(e.currentTarget.value)}
          />
          <Select
            label="Metric"
            data={METRICS}
            value={metric}
            onChange={(v) => v && setMetric(v)}
            allowDeselect={false}
            error={errors["/metric"]}
          />
          <Select
            label="Aggregation"
            data={AGGREGATIONS}
            value={aggregation}
            onChange={(v) => v && setAggregation(v)}
            allowDeselect={false}
            error={errors["/aggregation"]}
          />
          <Select
            label="Chart"
            data={CHARTS}
            value={chart}
            onChange={(v) => v && setChart(v as Chart)}
            allowDeselect={false}
          />
          <Select
            label="Group by"
            data={DIMENSIONS.map((d) => ({ value: d, label: d || "nothing" }))}
            value={dimension}
            onChange={(v) => setDimension(v ?? "")}
            allowDeselect={false}
            error={errors["/dimensions/0"] ?? errors["/dimensions"]}
          />
          <Select
            label="Window"
            data={["1h", "24h", "7d"]}
            value={window}
            onChange={(v) => v && setWindow(v)}
            allowDeselect={false}
          />
          <Button type="submit">Create widget</Button>
        </Stack>
      </form>
    </Modal>
  );
}
