import { fireEvent, screen } from "@testing-library/react";
import { afterEach, expect, test, vi } from "vitest";

import { answers, renderPage } from "../test/render";
import { quotaText } from "./Catalogue";
import { RegisterPage } from "./Register";

afterEach(() => vi.unstubAllGlobals());

function fill(label: string, value: string) {
  fireEvent.change(screen.getByLabelText(label, { exact: false, selector: "input" }), {
    target: { value },
  });
}

test("a refused field is shown at the field; an accepted registration says what comes next", async () => {
  const api = answers(
    {
      status: 400,
      body: {
        type: "/problems/validation",
        title: "Validation Failed",
        status: 400,
        detail: "$.password: must be at least 12 characters long",
        errors: [
          {
            pointer: "/password",
            detail: "$.password: must be at least 12 characters long",
          },
        ],
      },
    },
    { status: 202, body: { data: { status: "pending" } } },
  );
  vi.stubGlobal("fetch", api.fetch);
  renderPage(<RegisterPage />);

  fill("Name", "Dev");
  fill("Email", "dev@example.com");
  fill("Password", "short");
  fireEvent.click(screen.getByRole("button", { name: "Register" }));

  expect((await screen.findByRole("alert")).textContent).toContain("Registration refused");
  const password = screen.getByLabelText("Password", {
    exact: false,
    selector: "input",
  });
  expect(password.getAttribute("aria-invalid")).toBe("true");
  expect(screen.getByText("must be at least 12 characters long")).toBeTruthy();

  fill("Password", "a long enough passphrase");
  fireEvent.click(screen.getByRole("button", { name: "Register" }));
  const received = await screen.findByRole("status");
  expect(received.textContent).toContain("You will get an email at dev@example.com");
  expect(JSON.parse(String(api.calls[1].init.body))).toEqual({
    display_name: "Dev",
    email: "dev@example.com",
    password: "a long enough passphrase",
  });
});

test("a product's quota reads as a sentence", () => {
  expect(quotaText(null)).toBe("Unlimited");
  expect(quotaText({ limit: -1, interval: 1, interval_unit: "day" })).toBe("Unlimited");
  expect(quotaText({ limit: 1000, interval: 1, interval_unit: "day" })).toBe(
    "1,000 per day, per app",
  );
  expect(
    quotaText({
      limit: 5,
      interval: 2,
      interval_unit: "hour",
      key_scope: "developer",
    }),
  ).toBe("5 per 2 hours, per developer");
});
