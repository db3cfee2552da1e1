"""Types of the fixtures in this package's conftest."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable

from tests.conftest import Org

MakeRole = Callable[[Org, str, list[str]], Awaitable[uuid.UUID]]
MakeGroup = Callable[..., Awaitable[uuid.UUID]]
RoleId = Callable[[Org, str], Awaitable[uuid.UUID]]
