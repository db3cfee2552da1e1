"""What else happens when an API or a product node is deleted, in the deleting transaction.

The transition table: deleting an API revokes its active and pending subscriptions; deleting
a product disassociates its APIs, then revokes its subscriptions, then deletes the node. The
catalogue does the disassociation and the deletion; the subscriptions module registers the
revocation here when it is installed (``on_delete(Bundle.APIS, revoke_subscriptions)``).
A hook raising aborts the deletion, and nothing of it is kept.

Publication and imported revisions have hooks too (below), for governance's linting runs.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable

from sqlalchemy.ext.asyncio import AsyncSession

from portico.marketplace.node.models import Bundle, CatalogueNode

#: (session, the node about to be deleted, the reason to record) → None
DeleteHook = Callable[[AsyncSession, CatalogueNode, str], Awaitable[None]]
_HOOKS: dict[Bundle, list[DeleteHook]] = {}


def on_delete(bundle: Bundle, hook: DeleteHook) -> DeleteHook:
    hooks = _HOOKS.setdefault(bundle, [])
    if hook not in hooks:
        hooks.append(hook)
    return hook


def remove(bundle: Bundle, hook: DeleteHook) -> None:
    if hook in _HOOKS.get(bundle, []):
        _HOOKS[bundle].remove(hook)


async def before_delete(session: AsyncSession, node: CatalogueNode, reason: str) -> None:
    """Run every hook of the node's bundle, in registration order."""
    for hook in list(_HOOKS.get(node.bundle, [])):
        await hook(session, node, reason)


# ------------------------------------------------------------ publication and new revisions
#
# What other modules do when an API or a product is published (the editorial transition to
# ``published``, content/service.py) or when a gateway import writes an API (created or
# updated, imports/writer.py): governance queues a linting run. Called in the transaction of
# the change, after it was flushed; a hook must not fail the change for its own reasons (it
# queues work rather than doing it), and nothing it wrote outlives a change that failed.

#: (session, the node, who made the change: None for the system) → None
NodeHook = Callable[[AsyncSession, CatalogueNode, uuid.UUID | None], Awaitable[None]]
_PUBLISHED: list[NodeHook] = []
_IMPORTED: list[NodeHook] = []


def on_published(hook: NodeHook) -> NodeHook:
    if hook not in _PUBLISHED:
        _PUBLISHED.append(hook)
    return hook


def on_imported(hook: NodeHook) -> NodeHook:
    if hook not in _IMPORTED:
        _IMPORTED.append(hook)
    return hook


async def after_published(
    session: AsyncSession, node: CatalogueNode, actor_id: uuid.UUID | None
) -> None:
    for hook in list(_PUBLISHED):
        await hook(session, node, actor_id)


async def after_imported(
    session: AsyncSession, node: CatalogueNode, actor_id: uuid.UUID | None
) -> None:
    for hook in list(_IMPORTED):
        await hook(session, node, actor_id)
