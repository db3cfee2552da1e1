// The portal API's shapes the pages read (its OpenAPI document at /api/portal/v1/openapi.json).

export type Visibility = "public" | "internal" | "organisation";

export interface ApiSummary {
  id: string;
  title: string;
  version: string;
  overview: string;
  visibility: Visibility;
  updated_at: string;
}

/** One API with its OpenAPI document (null: none was imported with it). */
export interface ApiDetail extends ApiSummary {
  documentation: Record<string, unknown> | null;
}

export interface ProductQuota {
  /** requests per window; -1: unlimited */
  limit: number;
  interval: number;
  interval_unit: string;
  /** whose requests share a window: each app's, or all of a developer's apps' */
  key_scope?: "app" | "developer";
}

export interface Product {
  id: string;
  title: string;
  description: string;
  visibility: Visibility;
  quota: ProductQuota | null;
  apis: { id: string; title: string; version: string }[];
}

export interface DeveloperApp {
  id: string;
  name: string;
  description: string;
  key_hint: string;
  key_issued_at: string;
  created_at: string;
}

/** An app as creating it or rotating its key answers: with its key, this once. */
export interface AppWithKey extends DeveloperApp {
  credentials: { type: string; key: string }[];
}

export type SubscriptionStatus =
  "pending" | "provisioning" | "active" | "rejected" | "revoked" | "cancelled";

export interface Subscription {
  id: string;
  status: SubscriptionStatus;
  node: { id: string | null; bundle: string; title: string };
  reason: string | null;
  requested_at: string;
  decided_at: string | null;
  activated_at: string | null;
  ended_at: string | null;
}

export type UsageWindow = "1h" | "24h" | "7d";

export interface Usage {
  window: UsageWindow;
  requests: number;
  errors: number;
  latency_ms: { p50: number | null; p95: number | null; p99: number | null };
  quota: { limit: number | null; used: number | null };
}

export interface Me {
  id: string;
  email: string;
  display_name: string;
}
