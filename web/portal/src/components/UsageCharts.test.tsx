import { screen } from "@testing-library/react";
import { expect, test } from "vitest";

import { renderPage } from "../test/render";
import type { Usage } from "../types";
import UsageCharts from "./UsageCharts";

const QUIET: Usage = {
  window: "24h",
  requests: 0,
  errors: 0,
  latency_ms: { p50: null, p95: null, p99: null },
  quota: { limit: null, used: null },
};

test("no traffic in the window is said, not drawn", () => {
  renderPage(<UsageCharts usage={QUIET} />);
  expect(screen.getByText("No requests from this app in the last 24 hours.")).toBeTruthy();
  expect(screen.queryByRole("img")).toBeNull();
});

test("the charts are named by the figures they draw, and the quota by its share", () => {
  const busy: Usage = {
    window: "1h",
    requests: 42,
    errors: 3,
    latency_ms: { p50: 4.25, p95: 12, p99: null },
    quota: { limit: 1000, used: 250 },
  };
  renderPage(<UsageCharts usage={busy} />);
  expect(screen.getByRole("img", { name: "42 requests, 3 errors in the last hour" })).toBeTruthy();
  expect(
    screen.getByRole("img", {
      name: "response time p50 4.3 ms, p95 12.0 ms, p99 –",
    }),
  ).toBeTruthy();
  expect(screen.getByText(/250 of 1,000 requests used/)).toBeTruthy();
  const quota = screen.getByRole("progressbar", { name: "Quota used" });
  expect(quota.getAttribute("aria-valuenow")).toBe("25");
});
