"""What else happens when an API or a product node is deleted, in the deleting transaction.

The transition table: deleting an API revokes its active and pending subscriptions; deleting
a product disassociates its APIs, then revokes its subscriptions, then deletes the node. The
catalogue does the disassociation and the deletion; the subscriptions module registers the
revocation here when it is installed (``on_delete(Bundle.APIS, revoke_subscriptions)``).
A hook raising aborts the deletion, and nothing of it is kept.
"""

from __future__ import annotations

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
