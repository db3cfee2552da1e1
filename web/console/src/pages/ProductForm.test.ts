import { describe, expect, it } from "vitest";

import { quotaOf } from "./ProductForm";
import { quotaText } from "./Products";

describe("quotas", () => {
  const fields = { limit: "1000", interval: 1, unit: "day", scope: "app" };

  it("are made from the form's fields as the API takes them", () => {
    expect(quotaOf("limited", fields)).toEqual({
      limit: 1000,
      interval: 1,
      interval_unit: "day",
      key_scope: "app",
    });
    expect(quotaOf("unlimited", fields)?.limit).toBe(-1);
    expect(quotaOf("none", fields)).toBeNull();
  });

  it("read as the gateway enforces them", () => {
    expect(quotaText(quotaOf("limited", fields))).toBe("1,000 per day, per app");
    expect(quotaText(quotaOf("limited", { ...fields, interval: 5, unit: "minute" }))).toBe(
      "1,000 per 5 minutes, per app",
    );
    expect(quotaText(quotaOf("unlimited", fields))).toBe("unlimited");
    expect(quotaText(null)).toBe("no quota: traffic refused");
  });
});
