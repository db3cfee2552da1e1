"""The editorial workflow of moderated bundles (``apis``, ``api_products``).

    draft ──submit_for_review──▶ in_review ──publish──▶ published ──archive──▶ archived
      ▲  ◀──────create_new_draft──────┘                     │                     │
      └──────────────────create_new_draft───────────────────┘                     │
      └─────────────────────────────restore_to_draft──────────────────────────────┘

Each transition is gated by its own permission, ``use editorial transition <name>``
(Drupal's content-moderation strings): a content editor drafts and submits, an API manager
publishes and archives. ``create_new_draft`` on a published node takes it off the portal
until it is published again (one state per node: there is no live revision beside a draft).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from portico.marketplace.node.models import ModerationState

S = ModerationState


@dataclass(frozen=True)
class Transition:
    id: str
    label: str
    sources: frozenset[ModerationState]
    target: ModerationState

    @property
    def permission(self) -> str:
        return f"use editorial transition {self.id}"


TRANSITIONS: tuple[Transition, ...] = (
    Transition(
        "create_new_draft",
        "Create new draft",
        frozenset({S.DRAFT, S.IN_REVIEW, S.PUBLISHED}),
        S.DRAFT,
    ),
    Transition("submit_for_review", "Submit for review", frozenset({S.DRAFT}), S.IN_REVIEW),
    Transition("publish", "Publish", frozenset({S.IN_REVIEW}), S.PUBLISHED),
    Transition("archive", "Archive", frozenset({S.PUBLISHED}), S.ARCHIVED),
    Transition("restore_to_draft", "Restore to draft", frozenset({S.ARCHIVED}), S.DRAFT),
)
BY_ID = {t.id: t for t in TRANSITIONS}
#: the state an imported or newly created node starts in
INITIAL = S.DRAFT
#: the states awaiting an editorial decision (``/content/moderated``)
AWAITING_DECISION = frozenset({S.IN_REVIEW})


def available(state: ModerationState, permissions: Iterable[str]) -> list[Transition]:
    """The transitions a caller holding ``permissions`` may apply to a node in ``state``."""
    held = frozenset(permissions)
    return [t for t in TRANSITIONS if state in t.sources and t.permission in held]


def transition_permissions() -> tuple[tuple[str, str], ...]:
    """(permission, label) of every transition, for the module that declares them."""
    return tuple((t.permission, t.label) for t in TRANSITIONS)
