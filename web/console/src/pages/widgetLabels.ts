// How a widget's groups are named on its chart and in its table.

/** What a dimension counts, for the label of traffic that has none of it (a request no app
 * made is "(no app)", not an empty cell or an unnamed slice). */
const WHAT: Record<string, string> = {
  env_name: "environment",
  app_id: "app",
  app_name: "app",
  product_name: "product",
  api_name: "API",
  route_id: "route",
  route_name: "route name",
  api_path: "path",
  request_method: "method",
  response_status_code: "status",
  upstream_path: "upstream path",
  developer: "developer",
  consumer: "consumer",
};

export interface GroupedRow {
  dimensions?: Record<string, unknown>;
}

/** One dimension's value as shown: the value, or "(no <what>)" when the traffic had none. */
export function dimensionValue(dimension: string, value: unknown): string {
  if (value === null || value === undefined || String(value).trim() === "") {
    return `(no ${WHAT[dimension] ?? dimension.replace(/_/g, " ")})`;
  }
  return String(value);
}

/** A row's group: its dimensions' values joined ("shop · 200"), or "value" for a widget
 * that groups by nothing. */
export function groupLabel(row: GroupedRow): string {
  const entries = Object.entries(row.dimensions ?? {});
  if (entries.length === 0) return "value";
  return entries.map(([dimension, value]) => dimensionValue(dimension, value)).join(" · ");
}
