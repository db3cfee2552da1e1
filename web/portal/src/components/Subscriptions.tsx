import { Badge, Button, Table, Text } from "@mantine/core";

import type { Subscription, SubscriptionStatus } from "../types";

const LOOK: Record<SubscriptionStatus, { color: string; says: string }> = {
  pending: { color: "yellow", says: "Waiting for an administrator's approval" },
  provisioning: {
    color: "blue",
    says: "Approved: the gateway is being given access",
  },
  active: { color: "green", says: "The app's key is admitted" },
  rejected: { color: "red", says: "Rejected" },
  revoked: { color: "red", says: "Revoked: the app's key is refused" },
  cancelled: { color: "gray", says: "Cancelled" },
};

/** Statuses a developer may cancel (the API refuses the others with 409). */
const CANCELLABLE: ReadonlySet<SubscriptionStatus> = new Set(["pending", "active"]);
/** Statuses that change without the developer: the page asks again while one is shown. */
export const SETTLING: ReadonlySet<SubscriptionStatus> = new Set(["pending", "provisioning"]);

const when = (at: string) => new Date(at).toLocaleString("en-GB");

/** An app's subscriptions: what each is to, its status, and the reason a rejection or a
 * revocation gave. */
export function SubscriptionsTable(props: {
  subscriptions: Subscription[];
  onCancel: (subscription: Subscription) => void;
  busy?: boolean;
}) {
  if (props.subscriptions.length === 0) {
    return (
      <Text c="dimmed">
        No subscription yet: subscribe this app to an API or a product of the catalogue.
      </Text>
    );
  }
  const row = (subscription: Subscription) => {
    const look = LOOK[subscription.status];
    const title = subscription.node.title;
    return [
      <>
        {title}{" "}
        <Text span c="dimmed" size="xs">
          ({subscription.node.bundle === "product" ? "product" : "API"})
        </Text>
      </>,
      <Badge color={look.color} title={look.says}>
        {subscription.status}
      </Badge>,
      subscription.reason ?? "",
      when(subscription.requested_at),
      CANCELLABLE.has(subscription.status) && (
        <Button
          size="xs"
          variant="subtle"
          color="red"
          disabled={props.busy}
          onClick={() => props.onCancel(subscription)}
          aria-label={`Cancel the subscription to ${title}`}
        >
          Cancel
        </Button>
      ),
    ];
  };
  return (
    <Table
      aria-label="Subscriptions"
      striped
      data={{
        head: ["API or product", "Status", "Reason", "Requested", ""],
        body: props.subscriptions.map(row),
      }}
    />
  );
}
