"""The portal's routes of a marketplace feature follow that feature: absent when its module
is not installed, and answering 403 ``/problems/feature-disabled`` (naming it) while an
administrator has it switched off, as its admin API endpoints do.

Order, as on the admin API: the caller is authenticated first (an anonymous call is 401
whatever the feature's state), then the feature is checked.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Depends

from portico.core.db.session import SessionDep
from portico.core.openapi import raises
from portico.marketplace.public import FeatureDisabled, ensure_feature_on
from portico.portal.access import DeveloperDep


def feature_on(key: str) -> Callable[..., Coroutine[Any, Any, None]]:
    """The dependency that puts a router behind feature ``key``."""

    @raises(FeatureDisabled)
    async def dependency(_developer: DeveloperDep, session: SessionDep) -> None:
        await ensure_feature_on(session, key)

    dependency.__name__ = f"feature_{key}"
    return dependency


def gated(key: str) -> list[Any]:
    """``dependencies=`` for ``include_router``."""
    return [Depends(feature_on(key))]
