import { fireEvent, screen, within } from "@testing-library/react";
import { expect, test, vi } from "vitest";

import { renderPage } from "../test/render";
import type { Subscription, SubscriptionStatus } from "../types";
import { SubscriptionsTable } from "./Subscriptions";

function subscription(
  title: string,
  status: SubscriptionStatus,
  reason: string | null = null,
): Subscription {
  return {
    id: `sub-${title}`,
    status,
    node: {
      id: `node-${title}`,
      bundle: title.startsWith("P") ? "product" : "api",
      title,
    },
    reason,
    requested_at: "2026-11-26T10:00:00Z",
    decided_at: null,
    activated_at: null,
    ended_at: null,
  };
}

test("each subscription's status and reason; only pending and active ones can be cancelled", () => {
  const cancel = vi.fn();
  const shown = [
    subscription("orders", "pending"),
    subscription("Premium", "active"),
    subscription("billing", "rejected", "Billing is for partners only"),
    subscription("stock", "revoked", "Your trial period is over"),
    subscription("shipping", "provisioning"),
  ];
  renderPage(<SubscriptionsTable subscriptions={shown} onCancel={cancel} />);

  const rows = within(screen.getByRole("table", { name: "Subscriptions" })).getAllByRole("row");
  const cells = rows.slice(1).map((row) =>
    within(row)
      .getAllByRole("cell")
      .slice(0, 3)
      .map((cell) => cell.textContent),
  );
  expect(cells).toEqual([
    ["orders (API)", "pending", ""],
    ["Premium (product)", "active", ""],
    ["billing (API)", "rejected", "Billing is for partners only"],
    ["stock (API)", "revoked", "Your trial period is over"],
    ["shipping (API)", "provisioning", ""],
  ]);
  const cancels = screen.getAllByRole("button", {
    name: /^Cancel the subscription to /,
  });
  expect(cancels.map((button) => button.getAttribute("aria-label"))).toEqual([
    "Cancel the subscription to orders",
    "Cancel the subscription to Premium",
  ]);
  fireEvent.click(cancels[1]);
  expect(cancel).toHaveBeenCalledWith(shown[1]);
});

test("no subscription says what to do", () => {
  renderPage(<SubscriptionsTable subscriptions={[]} onCancel={() => {}} />);
  expect(screen.queryByRole("table")).toBeNull();
  expect(screen.getByText(/No subscription yet/).textContent).toContain("subscribe this app");
});
