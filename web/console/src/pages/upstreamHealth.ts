// An upstream's live health, as the data-plane nodes of its environment last reported it
// (GET .../upstreams/{id}/health), summed up per target for the upstreams page.

export interface TargetHealth {
  host: string;
  port: number;
  healthy: boolean;
  reason: string;
  secondsInState: number | null;
  lastProbe: string | null;
  probes: number;
  probeFailures: number;
  reports: number;
}

export interface NodeHealth {
  nodeId: string;
  address: string | null;
  lastSeenAt: string;
  reported: boolean;
  probing: boolean;
  targets: TargetHealth[];
}

export interface UpstreamHealth {
  upstreamId: string;
  active: boolean;
  passive: boolean;
  items: NodeHealth[];
}

export type State = "healthy" | "unhealthy" | "mixed";

export interface TargetSummary {
  target: string;
  state: State;
  /** gateway nodes that see it unhealthy, of those that reported it */
  unhealthyOn: number;
  reportedBy: number;
  /** why, as the first node that sees it unhealthy says (else the last change's reason) */
  reason: string;
  lastProbe: string | null;
}

/** Each target once, as every reporting node sees it: healthy everywhere, unhealthy
 * everywhere, or mixed; in the order the first node listed them. */
export function summarize(health: UpstreamHealth): TargetSummary[] {
  const byTarget = new Map<string, TargetHealth[]>();
  for (const node of health.items) {
    if (!node.reported) continue;
    for (const target of node.targets) {
      const key = `${target.host}:${target.port}`;
      byTarget.set(key, [...(byTarget.get(key) ?? []), target]);
    }
  }
  return [...byTarget.entries()].map(([target, seen]) => {
    const down = seen.filter((t) => !t.healthy);
    const state: State =
      down.length === 0 ? "healthy" : down.length === seen.length ? "unhealthy" : "mixed";
    const telling = down[0] ?? seen[0];
    return {
      target,
      state,
      unhealthyOn: down.length,
      reportedBy: seen.length,
      reason: telling.reason,
      lastProbe: telling.lastProbe,
    };
  });
}

/** What a target's badge says. */
export function describe(summary: TargetSummary): string {
  if (summary.state === "healthy") return `${summary.target} healthy`;
  const where =
    summary.state === "mixed" ? ` on ${summary.unhealthyOn} of ${summary.reportedBy} nodes` : "";
  const why = summary.reason ? ` (${summary.reason})` : "";
  return `${summary.target} unhealthy${where}${why}`;
}

/** How many gateway nodes report the upstream at all (none: not deployed, or not loaded). */
export const reporting = (health: UpstreamHealth) => health.items.filter((n) => n.reported).length;
