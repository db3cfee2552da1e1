"""What else happens when a developer app is deleted or its key rotated, in the same
transaction. The subscriptions module (above this one: it knows apps, apps do not know it)
registers here: a deletion cancels the app's subscriptions and owes the removal of its
remote apps, a rotation owes them the new key. A hook raising aborts the change."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from portico.marketplace.developer_app.models import DeveloperApp

#: (session, the app, now) → None
AppHook = Callable[[AsyncSession, DeveloperApp, datetime], Awaitable[None]]
_BEFORE_DELETE: list[AppHook] = []
_AFTER_ROTATE: list[AppHook] = []


def on_delete(hook: AppHook) -> AppHook:
    if hook not in _BEFORE_DELETE:
        _BEFORE_DELETE.append(hook)
    return hook


def on_rotate(hook: AppHook) -> AppHook:
    if hook not in _AFTER_ROTATE:
        _AFTER_ROTATE.append(hook)
    return hook


async def before_delete(session: AsyncSession, app: DeveloperApp, now: datetime) -> None:
    for hook in list(_BEFORE_DELETE):
        await hook(session, app, now)


async def after_rotate(session: AsyncSession, app: DeveloperApp, now: datetime) -> None:
    for hook in list(_AFTER_ROTATE):
        await hook(session, app, now)
