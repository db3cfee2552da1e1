import { describe, expect, it } from "vitest";

import { subject } from "./AuditLog";
import type { AuditEntry } from "./AuditLog";

const entry = (fields: Partial<AuditEntry>): AuditEntry => ({
  id: "a1",
  occurredAt: "2026-01-01T00:00:00Z",
  actor: { email: "owner@example.com", kind: "user" },
  action: "environment.update",
  entityType: "environment",
  entityId: "e1",
  summary: "",
  before: null,
  after: null,
  ...fields,
});

describe("what an audit entry is about", () => {
  it("is the entity's kind and name, from its snapshots", () => {
    expect(subject(entry({ after: { name: "prod" } }))).toBe("environment prod");
    expect(subject(entry({ before: { name: "old" }, after: null }))).toBe("environment old");
    expect(subject(entry({ entityType: "user", after: { email: "v@example.com" } }))).toBe(
      "user v@example.com",
    );
  });

  it("is the kind alone when nothing names it", () => {
    expect(subject(entry({ entityType: "org", after: { quota: 3 } }))).toBe("org");
  });
});
