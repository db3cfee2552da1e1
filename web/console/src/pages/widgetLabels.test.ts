import { describe, expect, it } from "vitest";

import { dimensionValue, groupLabel } from "./widgetLabels";

describe("a widget's group labels", () => {
  it("names traffic without an app, a consumer or a developer", () => {
    expect(groupLabel({ dimensions: { app_name: "" } })).toBe("(no app)");
    expect(groupLabel({ dimensions: { app_name: null } })).toBe("(no app)");
    expect(groupLabel({ dimensions: { consumer: "  " } })).toBe("(no consumer)");
    expect(dimensionValue("developer", undefined)).toBe("(no developer)");
    expect(dimensionValue("some_new_one", "")).toBe("(no some new one)");
  });

  it("keeps the values there are, joined, and 0 is a value", () => {
    expect(groupLabel({ dimensions: { app_name: "mobile", response_status_code: 200 } })).toBe(
      "mobile · 200",
    );
    expect(groupLabel({ dimensions: { env_name: "shop", app_name: "" } })).toBe("shop · (no app)");
    expect(dimensionValue("response_status_code", 0)).toBe("0");
  });

  it("calls the one group of an ungrouped widget its value", () => {
    expect(groupLabel({})).toBe("value");
    expect(groupLabel({ dimensions: {} })).toBe("value");
  });
});
