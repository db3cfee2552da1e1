import { describe, expect, it } from "vitest";

import { describe as describeTarget, reporting, summarize } from "./upstreamHealth";
import type { NodeHealth, TargetHealth, UpstreamHealth } from "./upstreamHealth";

const target = (port: number, healthy: boolean, reason = ""): TargetHealth => ({
  host: "10.0.0.1",
  port,
  healthy,
  reason,
  secondsInState: null,
  lastProbe: healthy ? "200" : "tcp_failure (ConnectionRefusedError)",
  probes: 3,
  probeFailures: healthy ? 0 : 3,
  reports: 0,
});

const node = (nodeId: string, targets: TargetHealth[], reported = true): NodeHealth => ({
  nodeId,
  address: null,
  lastSeenAt: "2026-11-26T10:00:00Z",
  reported,
  probing: true,
  targets,
});

const health = (...items: NodeHealth[]): UpstreamHealth => ({
  upstreamId: "u",
  active: true,
  passive: false,
  items,
});

describe("summarize", () => {
  it("sums up each target over the nodes that report it", () => {
    const down = "active: 2 consecutive tcp_failures";
    const summary = summarize(
      health(
        node("a", [target(80, true), target(81, false, down), target(82, false, down)]),
        node("b", [target(80, true), target(81, false, down), target(82, true)]),
        node("old", [target(80, false)], false), // reports nothing of this upstream: ignored
      ),
    );
    expect(summary.map((t) => [t.target, t.state, t.unhealthyOn, t.reportedBy])).toEqual([
      ["10.0.0.1:80", "healthy", 0, 2],
      ["10.0.0.1:81", "unhealthy", 2, 2],
      ["10.0.0.1:82", "mixed", 1, 2],
    ]);
    expect(summary.map(describeTarget)).toEqual([
      "10.0.0.1:80 healthy",
      `10.0.0.1:81 unhealthy (${down})`,
      `10.0.0.1:82 unhealthy on 1 of 2 nodes (${down})`,
    ]);
    expect(summary[1].lastProbe).toBe("tcp_failure (ConnectionRefusedError)");
  });

  it("counts the nodes that report the upstream at all", () => {
    expect(reporting(health(node("a", [], false)))).toBe(0);
    expect(summarize(health(node("a", [], false)))).toEqual([]);
    expect(reporting(health(node("a", [target(80, true)]), node("b", [], false)))).toBe(1);
  });
});
