"""The subscription state table (seed, "States and transitions"; the design's
"Subscriptions and notifications"): which action moves a subscription from which states to
which. An action from any other state is a 409 that names the state.

    pending      --approve-->  provisioning  (active at once when there is nothing to
                                              provision: a portal-native node)
    provisioning --(the gateway told)-->  active
    pending      --reject (reason)-->  rejected
    active, provisioning --revoke (reason)-->  revoked
    pending, active --cancel (by the developer)-->  cancelled

Deleting the node revokes its pending, provisioning and active subscriptions (the seed's
rows for ``DELETE /apis/{node}`` and ``DELETE /products/{node}``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from portico.marketplace.subscription.models import SubscriptionStatus as S


@dataclass(frozen=True)
class Transition:
    action: str
    sources: frozenset[S]
    target: S


TRANSITIONS: Mapping[str, Transition] = MappingProxyType(
    {
        t.action: t
        for t in (
            Transition("approve", frozenset({S.PENDING}), S.PROVISIONING),
            Transition("reject", frozenset({S.PENDING}), S.REJECTED),
            Transition("revoke", frozenset({S.ACTIVE, S.PROVISIONING}), S.REVOKED),
            Transition("cancel", frozenset({S.PENDING, S.ACTIVE}), S.CANCELLED),
        )
    }
)
#: what deleting the node ends
LIVE = frozenset({S.PENDING, S.PROVISIONING, S.ACTIVE})
#: what may hold access on a gateway (so ending it owes a withdrawal)
GRANTED = frozenset({S.PROVISIONING, S.ACTIVE})
