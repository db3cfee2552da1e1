"""The ``import-apis`` job: a connection's APIs (all, or those of ``api_ids``) imported in
the background, for inventories too large to import within one request.

The handler lists the remote APIs, then works in batches of :data:`BATCH`: it reads a
batch's documents a few at once (outside any transaction), checks that it was not asked to
stop, writes the batch in one transaction of its own (each API's node and audit entry
together), and reports progress ``{done, total}``; the next batch is read while one is
written. So a cancellation, or a worker that dies,
leaves whole APIs only, never a node half written; and since imports are idempotent, a
re-run (the worker re-queues a job whose worker died) updates what the first run wrote.
An API that cannot be read, or an ``api_id`` the remote side does not expose, is recorded
in the job's ``errors`` (with its ``api_id``) and the job goes on. A remote side that cannot
be listed fails the job (and marks the connection ``failing``). The result counts the
outcomes: ``{total, created, updated, failed}``.

Memory stays flat whatever the inventory's size: the listing (ids and titles) is kept, the
documents of two batches at most, and each batch's session is closed before the next.

Registered when this module loads: by the admin API's routes (which enqueue it) and by
``portico serve``'s workers (``worker.py``, which run it with the process's settings).
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections import Counter
from typing import Any

from portico.core.account import find_by_id
from portico.core.audit import Actor
from portico.core.job_worker import JobContext, JobError, register
from portico.marketplace.connection.egress import outbound_for
from portico.marketplace.connection.repository import GatewayConnectionRepository
from portico.marketplace.connection.service import secrets_box
from portico.marketplace.connectors.base import RemoteApi, RemoteApiDetail
from portico.marketplace.imports import writer
from portico.marketplace.imports.problems import RemoteFailed
from portico.marketplace.imports.remote import Fetched, Remote
from portico.marketplace.imports.writer import Origin

IMPORT_APIS = "import-apis"
#: APIs read, then written in one transaction, between two progress reports
BATCH = 25


async def import_apis(ctx: JobContext) -> dict[str, int]:
    connection_id, api_ids = _params(ctx.params)
    settings = ctx.settings
    if settings is None:
        raise JobError("this worker has no settings: it cannot reach gateway connections")
    outbound = outbound_for(settings)
    async with ctx.database.session() as session:
        connection = await GatewayConnectionRepository(session).get(connection_id)
        if connection is None:
            raise JobError(f"gateway connection {connection_id} no longer exists")
        user = await find_by_id(session, ctx.created_by) if ctx.created_by else None
        remote = Remote.of(
            connection,
            box=secrets_box(settings.signing_keys()),
            outbound=outbound,
            database=ctx.database,
            clock=ctx.clock,
        )
    actor = Actor(id=ctx.created_by, email=user.email if user else None)
    counts: Counter[str] = Counter()
    async with outbound.reading() as shared:
        remote = remote.reading(shared)
        try:
            listed = await remote.list_apis()
        except RemoteFailed as failed:
            raise JobError(failed.detail) from None
        selected, unknown = _selected(ctx, remote, listed, api_ids)
        counts["failed"] = unknown
        total = len(selected)
        await ctx.progress(0, total)
        await _batches(ctx, remote, actor, selected, counts)
    return {
        "total": total + unknown,
        "created": counts["created"],
        "updated": counts["updated"],
        "failed": counts["failed"],
    }


async def _batches(
    ctx: JobContext,
    remote: Remote,
    actor: Actor,
    selected: list[RemoteApi],
    counts: Counter[str],
) -> None:
    """Read and write ``selected`` batch by batch. The next batch is read while one is
    written (the remote side's time, most of a job's, overlaps the store's); a batch read
    is written only if the job was not asked to stop meanwhile."""
    batches = [selected[i : i + BATCH] for i in range(0, len(selected), BATCH)]
    if not batches:
        return
    await ctx.check_cancelled()
    reading: asyncio.Task[list[Fetched]] | None = asyncio.create_task(remote.fetch_many(batches[0]))
    done = 0
    try:
        for index, batch in enumerate(batches):
            assert reading is not None
            fetched = await reading
            reading = None
            await ctx.check_cancelled()  # the reads took a while: asked to stop meanwhile?
            if index + 1 < len(batches):
                reading = asyncio.create_task(remote.fetch_many(batches[index + 1]))
            await _write(ctx, remote, actor, batch, fetched, counts)
            done += len(batch)
            await ctx.progress(done, len(selected))
    finally:
        if reading is not None:  # cancelled, failed: the reads under way are dropped
            reading.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reading


async def _write(
    ctx: JobContext,
    remote: Remote,
    actor: Actor,
    batch: list[RemoteApi],
    fetched: list[Fetched],
    counts: Counter[str],
) -> None:
    """One batch in one transaction, on the connection read again (locked on PostgreSQL):
    a connection deleted meanwhile ends the job rather than leave nodes pointing nowhere."""
    async with ctx.database.session() as session, session.begin():
        connection = await GatewayConnectionRepository(session).reread(remote.connection_id)
        if connection is None:
            raise JobError(f"{remote.label} was deleted while its APIs were imported")
        origin = Origin(
            connection_id=connection.id,
            connection_name=connection.name,
            source=connection.source,
            actor=actor,
            now=ctx.clock.now(),
            context=f"(job {ctx.job_id})",
        )
        known = await writer.known_apis(session, origin, [api.api_id for api in batch])
        for api, result in zip(batch, fetched, strict=True):
            if isinstance(result, RemoteApiDetail):
                try:
                    written = await writer.write_api(session, origin, result, known=known)
                except RemoteFailed as refused:
                    result = refused
                else:
                    counts["created" if written.created else "updated"] += 1
                    continue
            ctx.error(result.detail, api_id=api.api_id)
            counts["failed"] += 1


def _selected(
    ctx: JobContext, remote: Remote, listed: list[RemoteApi], api_ids: list[str] | None
) -> tuple[list[RemoteApi], int]:
    """The APIs to import, and how many of ``api_ids`` name none (each an error)."""
    if api_ids is None:
        return listed, 0
    by_id = {api.api_id: api for api in listed}
    missing = [a for a in api_ids if a not in by_id]
    for api_id in missing:
        ctx.error(remote.no_api(api_id).detail, api_id=api_id)
    return [by_id[a] for a in api_ids if a in by_id], len(missing)


def _params(params: dict[str, Any]) -> tuple[uuid.UUID, list[str] | None]:
    """``{connection_id, api_ids?}`` as the endpoint queued them; anything else is refused
    (a job row written by hand)."""
    unknown = set(params) - {"connection_id", "api_ids"}
    api_ids = params.get("api_ids")
    if unknown or not (
        api_ids is None
        or (isinstance(api_ids, list) and all(isinstance(a, str) and a for a in api_ids))
    ):
        raise JobError("params: connection_id (a connection's id) and api_ids (a list of ids)")
    try:
        connection_id = uuid.UUID(str(params.get("connection_id")))
    except ValueError:
        raise JobError("params: connection_id must be a gateway connection's id") from None
    return connection_id, list(dict.fromkeys(api_ids)) if api_ids is not None else None


register(IMPORT_APIS, import_apis)
