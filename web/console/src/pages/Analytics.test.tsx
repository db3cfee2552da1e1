import { screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { ME, answering, signedIn } from "../test/fetch";
import { renderInConsole } from "../test/render";
import { AnalyticsPage } from "./Analytics";

const BY_APP = {
  id: "w1",
  name: "Requests by app",
  metric: "requests-count",
  aggregation: "SUM",
  dimensions: ["app_name", "response_status_code"],
  chart: "table",
};

describe("a table widget", () => {
  it("has a column per dimension, and names traffic that no app made", async () => {
    signedIn();
    const me = { ...ME, orgs: [{ ...ME.orgs[0], permissions: ["analytics.read"] }] };
    answering({
      "GET /api/me": { body: me },
      "GET /api/orgs/o1/widgets": { body: { items: [BY_APP], page: 1, size: 100, total: 1 } },
      "GET /api/orgs/o1/widgets/w1/data": {
        body: {
          value: 9,
          data: [
            { dimensions: { app_name: "mobile", response_status_code: 200 }, value: 5 },
            { dimensions: { app_name: "", response_status_code: 401 }, value: 4 },
          ],
        },
      },
    });
    renderInConsole(<AnalyticsPage />);
    const table = await screen.findByRole("table", { name: "Requests by app data" });
    const [head, mobile, none] = within(table).getAllByRole("row");
    expect(head).toHaveTextContent("app_nameresponse_status_codeValue");
    expect(mobile).toHaveTextContent("mobile2005");
    expect(none).toHaveTextContent("(no app)4014");
  });
});
