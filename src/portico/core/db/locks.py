"""Row locks taken in a deliberate order.

PostgreSQL checks a foreign key by locking the referenced row ``FOR KEY SHARE``, and it does
so on every update of a row the same transaction already changed, whatever the columns.
A transaction that locks a child row and then writes it twice therefore ends up asking for its
parents' rows; a deletion that holds the parent ``FOR UPDATE`` and then reaches for the
children waits for it: a deadlock. Whoever locks a child row to write it takes its parents
first (:func:`share_keys`), the order every deletion takes them in. SQLite takes one lock on
the whole database, so this is a no-op there.
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession


async def share_keys(session: AsyncSession, model: type[Any], *ids: uuid.UUID | None) -> None:
    """Lock the rows of ``model`` with these ids ``FOR KEY SHARE`` until the transaction
    ends (ids that are None, or rows already gone, are passed over). The lock only keeps the
    rows from being deleted or re-keyed: ordinary updates of them go on."""
    wanted = sorted({i for i in ids if i is not None})
    if not wanted or session.get_bind().dialect.name != "postgresql":
        return
    await session.execute(
        select(model.id)
        .where(model.id.in_(wanted))
        .order_by(model.id)
        .with_for_update(read=True, key_share=True)
    )
