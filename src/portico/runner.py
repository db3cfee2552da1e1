"""Running the processes: ``portico serve`` (control plane + embedded gateway) and
``portico gateway`` (a standalone data-plane node)."""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import gc
import logging
import os
import platform
import signal
import socket
import uuid
from pathlib import Path
from typing import Final

import uvicorn

from portico.core.settings import Settings, split_host_port
from portico.gateway.gateway import Gateway
from portico.gateway.http.server import serve as serve_http
from portico.gateway.node_options import GatewayOptions
from portico.gateway.status import status_handler
from portico.gateway.telemetry.rollups import TelemetryRecorder

logger = logging.getLogger("portico.runner")


def use_uvloop() -> None:
    with contextlib.suppress(ImportError):
        import uvloop

        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())


#: young collections of a gateway node: every this many net allocations (see settle_heap)
NODE_YOUNG_COLLECTION: Final = 20_000
#: of ``portico serve``, which answers the control plane too: each young collection frees the
#: cyclic garbage of the requests since the last one, in one pause. bench_catalogue.py (SQLite,
#: 115 cases of 100 pages): at 20,000 the longest pause of a case was up to 41 ms (p90 of the
#: cases 23 ms, the tail of a page's latency); at 4,000 up to 6.5 ms (p90 4.2), p50s unchanged
SERVE_YOUNG_COLLECTION: Final = 4_000


#: glibc's ``mallopt`` parameters (malloc.h)
_M_TRIM_THRESHOLD: Final = -1
_M_MMAP_THRESHOLD: Final = -3
#: blocks up to this size come from the heap, where a freed one is reused: a logger's batch
#: (~700 KB for 1000 entries) and the copies a Kafka produce request makes of it (aiokafka
#: joins it about eight times) are of that size
HEAP_BLOCKS_UP_TO: Final = 4 * 1024 * 1024
#: free memory at the top of the heap kept rather than handed back to the system
HEAP_TOP_KEPT: Final = 32 * 1024 * 1024


def reuse_large_blocks() -> bool:
    """Have glibc's malloc keep and reuse blocks of up to a few megabytes. By default it maps
    a block of more than 128 KB fresh from the system (raising that bound to the size of the
    largest such block freed since) and gives the top of the heap back once more than twice
    that is free there: a batch's buffers, allocated and freed together, then came back as
    new pages every time, each page faulted in and zeroed again. Measured on stream-logger's
    case of bench/bench_plugins.py (15 rounds a run): ~240 page faults a batch and a
    throughput ratio of 0.82-0.91 (four runs), against 0.90-0.93 (four runs) with these
    bounds (0.92 in three runs with larger ones, 32 MiB and 128 MiB). Not done where the
    operator set either bound in the environment (glibc reads ``MALLOC_MMAP_THRESHOLD_`` and
    ``MALLOC_TRIM_THRESHOLD_``) nor on another C library. True when it was done."""
    if platform.libc_ver()[0] != "glibc":
        return False
    if "MALLOC_MMAP_THRESHOLD_" in os.environ or "MALLOC_TRIM_THRESHOLD_" in os.environ:
        return False
    libc = ctypes.CDLL(None)
    done = libc.mallopt(_M_MMAP_THRESHOLD, HEAP_BLOCKS_UP_TO)
    return bool(done and libc.mallopt(_M_TRIM_THRESHOLD, HEAP_TOP_KEPT))


def settle_heap(young: int = NODE_YOUNG_COLLECTION) -> None:
    """Move what start-up allocated (modules, settings, the first configuration) out of the
    collector's reach: full collections then scan only what traffic allocates. Measured on
    the gateway under wrk: collections took 10% of its time without this. Done
    once: freezing after every config swap would keep swapped-out cyclic structures forever.
    And malloc told to reuse large blocks (:func:`reuse_large_blocks`)."""
    reuse_large_blocks()
    gc.collect()
    gc.freeze()
    # Young collections run every `young` net allocations and scan what is alive then (the
    # objects of in-flight requests): rarer collections scan about as much each, so the
    # total falls with the frequency; but each frees all the cyclic garbage made since the
    # last, in one pause. Short-lived cycles wait a little longer to be freed.
    gc.set_threshold(young, 20, 20)


async def _until_signalled() -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    await stop.wait()


def gateway_options(settings: Settings) -> GatewayOptions:
    return GatewayOptions(
        node_id=settings.gateway_node_id or f"{socket.gethostname()}-{uuid.uuid4().hex[:8]}",
        secret_keys=tuple(settings.signing_keys()),
        egress_allow=tuple(settings.gateway_egress_allow),
        trusted_proxies=tuple(settings.gateway_trusted_proxies),
        cache_dir=settings.data_dir / "cache",
        quota_redis_url=settings.redis_url,
        resolvers=tuple(settings.gateway_resolvers),
        discovery_min_ttl=settings.gateway_discovery_min_ttl_seconds,
        discovery_max_ttl=settings.gateway_discovery_max_ttl_seconds,
    )


async def _listen_gateway(gateway: Gateway, settings: Settings) -> list[asyncio.Server]:
    host, port = split_host_port(settings.gateway_listen)
    status_host, status_port = split_host_port(settings.metrics_listen)
    traffic = await serve_http(gateway.handle, host, port)
    status = await serve_http(status_handler(gateway), status_host, status_port)
    return [traffic, status]


async def serve_all(settings: Settings) -> None:
    """Control plane on PORTICO_LISTEN, embedded gateway on PORTICO_GATEWAY_LISTEN."""
    from portico.app import create_app
    from portico.embedded import SnapshotFeeder, database_sink
    from portico.worker import build_workers

    app = create_app(settings)
    try:  # the mailer and the jobs worker, built (settings checked) before anything starts
        workers = build_workers(settings, database=app.state.database, clock=app.state.clock)
    except ValueError as error:  # the message names the setting, never its secret value
        raise SystemExit(f"configuration error: {error}") from None
    host, port = split_host_port(settings.listen)
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            host=host,
            port=port,
            loop="none",
            http="httptools",
            log_config=None,
            access_log=False,
            server_header=False,
            # long-polling gateway nodes hold requests for up to a minute: do not wait them out
            timeout_graceful_shutdown=3,
        )
    )
    gateway = Gateway(options=gateway_options(settings))
    telemetry = TelemetryRecorder(
        database_sink(app.state.database, app.state.clock, gateway.options.node_id),
        interval=settings.telemetry_interval_seconds,
    )
    gateway.observers.append(telemetry.observe)
    telemetry.start()
    listeners = await _listen_gateway(gateway, settings)
    feeder = asyncio.create_task(
        SnapshotFeeder(
            gateway, app.state.database, clock=app.state.clock, address=settings.gateway_listen
        ).run()
    )
    control = asyncio.create_task(server.serve())
    if workers is not None:
        workers.start()
    settle_heap(SERVE_YOUNG_COLLECTION)
    try:
        await asyncio.wait(
            [control, asyncio.create_task(_until_signalled())],
            return_when=asyncio.FIRST_COMPLETED,
        )
    finally:
        server.should_exit = True
        feeder.cancel()
        for listener in listeners:
            listener.close()
        if workers is not None:  # before the app's lifespan disposes of the store
            await workers.stop()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await control
        with contextlib.suppress(asyncio.CancelledError):
            await feeder
        await telemetry.stop()
        await gateway.close()


async def run_gateway(
    settings: Settings, *, control_plane: str, environment: str, token: str, state_dir: Path
) -> None:
    """A standalone node: starts from its disk snapshot when it has one, then follows the
    control plane; keeps serving whatever loaded last when the control plane is down."""
    from portico.gateway.sync import ControlPlaneSync, SnapshotStore

    gateway = Gateway(options=gateway_options(settings))
    sync = ControlPlaneSync(
        gateway,
        node_id=gateway.options.node_id,
        control_plane=control_plane,
        env_id=environment,
        token=token,
        store=SnapshotStore(state_dir, environment),
    )
    telemetry = TelemetryRecorder(sync.send_telemetry, interval=settings.telemetry_interval_seconds)
    gateway.observers.append(telemetry.observe)
    telemetry.start()
    await sync.start_from_disk()
    listeners = await _listen_gateway(gateway, settings)
    settle_heap()
    tasks = [
        asyncio.create_task(sync.run()),
        asyncio.create_task(sync.heartbeat_forever()),
    ]
    try:
        await _until_signalled()
    finally:
        for task in tasks:
            task.cancel()
        for listener in listeners:
            listener.close()
        await telemetry.stop()
        await sync.close()
        await gateway.close()
