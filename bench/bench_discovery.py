"""The event loop's lag while a gateway keeps 1,000 upstreams with DNS discovery current.
Printed, never asserted.

A gateway (uvloop, the build in use) serves one environment of 1,000 upstreams, each with
``discovery: {type: dns, serviceName: svc<i>.test:8080}``, resolved by a real dnsmasq
(tests/support/dnsserver.py) whose records have a TTL of 1 s: with the bounds at 1 s every
upstream is resolved again about every second (two queries, A and AAAA: ~2,000 queries a
second). Every ``--flip`` seconds half of the names change address, so that half of the
upstreams also rebuild their balancer and tell their health checker.

Meanwhile a timer asks to run every millisecond. How late each run comes is the loop's lag
(nothing else runs while a callback holds the loop), but on a shared machine much of a late
run is the scheduler's: the process was not on a core. So each run also records the CPU the
loop's thread spent since the previous run (the loop's own work in between, an upper bound
of the longest callback) and how long the thread waited on a run queue meanwhile (Linux's
schedstat: runnable, no core free); a lateness less that wait is the loop's own, or the GIL
held by another thread (c-ares' thread is one). Every garbage collection is timed (it stops
the loop whoever allocated). The same meter then runs on the idle loop of the same process,
and the two are printed side by side: discovery's share is the difference.

    .venv/bin/python bench/bench_discovery.py [--upstreams 1000] [--seconds 20]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from portico.gateway.gateway import Gateway
from portico.gateway.node_options import GatewayOptions
from portico.gateway.snapshot import content_hash
from portico.runner import settle_heap, use_uvloop

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.support.dnsserver
from tests.support.dnsserver import DnsServer

TICK = 0.001


def snapshot(upstreams: int) -> dict[str, Any]:
    document: dict[str, Any] = {
        "version": 1,
        "generated_at": "2026-01-01T00:00:00+00:00",
        "org_id": "org",
        "environment_id": "env",
        "environment_name": "bench",
        "gateway_hosts": ["bench.example.com"],
        "routes": [
            {
                "id": f"rev:{i}",
                "api_id": "api",
                "api_name": "api",
                "revision_id": "rev",
                "revision_number": 1,
                "name": f"r{i}",
                "uri": f"/r{i}/*",
                "methods": [],
                "hosts": [],
                "priority": 0,
                "status": 1,
                "upstream_id": f"up{i}",
                "plugins": [],
            }
            for i in range(upstreams)
        ],
        "upstreams": {
            f"up{i}": {
                "id": f"up{i}",
                "name": f"svc{i}",
                "specification": {
                    "discovery": {"type": "dns", "serviceName": f"svc{i}.test:8080"},
                    "checks": {"passive": {}},
                },
            }
            for i in range(upstreams)
        },
        "consumers": [],
        "global_plugins": [],
    }
    document["content_hash"] = content_hash(document)
    return document


def addresses(upstreams: int, generation: int) -> dict[str, list[str]]:
    """Two addresses a name; every other name's second address moves with ``generation``."""
    names: dict[str, list[str]] = {}
    for i in range(upstreams):
        moved = generation if i % 2 else 0
        names[f"svc{i}.test"] = [
            f"127.1.{i // 250}.{i % 250 + 1}",
            f"127.2.{moved % 250}.{i % 250 + 1}",
        ]
    return names


class LagMeter:
    """A timer that asks to run every TICK seconds: how late each run came, how much CPU the
    loop's thread spent and how long it waited on a run queue since the previous run, and how
    long each garbage collection took (the module's docstring says why)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.lags: list[float] = []
        self.cpu: list[float] = []
        #: each lateness less the time the thread waited for a core meanwhile
        self.own_lags: list[float] = []
        self.collections: list[float] = []
        self._due = 0.0
        self._cpu_at = 0.0
        self._queued_at = 0.0
        # the thread's schedstat: CPU time, time waiting on a run queue, timeslices (ns)
        self._schedstat = os.open(
            f"/proc/self/task/{threading.get_native_id()}/schedstat", os.O_RDONLY
        )
        self._collecting = 0.0
        self._handle: asyncio.TimerHandle | None = None

    def start(self) -> None:
        gc.callbacks.append(self._collection)
        self._due = time.perf_counter() + TICK
        self._cpu_at = time.thread_time()
        self._queued_at = self._queued()
        self._handle = self.loop.call_later(TICK, self._tick)

    def _tick(self) -> None:
        now = time.perf_counter()
        cpu = time.thread_time()
        queued = self._queued()
        lag = max(0.0, now - self._due)
        self.lags.append(lag)
        self.own_lags.append(max(0.0, lag - (queued - self._queued_at)))
        self.cpu.append(cpu - self._cpu_at)
        self._due = now + TICK
        self._cpu_at = cpu
        self._queued_at = queued
        self._handle = self.loop.call_later(TICK, self._tick)

    def _queued(self) -> float:
        """Seconds the loop's thread has waited on a run queue (runnable, not running)."""
        return int(os.pread(self._schedstat, 128, 0).split()[1]) / 1e9

    def _collection(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._collecting = time.perf_counter()
        elif self._collecting:
            self.collections.append(time.perf_counter() - self._collecting)

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
        gc.callbacks.remove(self._collection)
        os.close(self._schedstat)


def _figures(values: list[float]) -> list[str]:
    """p50, p99, p99.9, max in ms (nothing measured: dashes)."""
    if not values:
        return ["-"] * 4
    ordered = sorted(values)
    picks = [
        statistics.median(ordered),
        ordered[int(len(ordered) * 0.99)],
        ordered[int(len(ordered) * 0.999)],
        ordered[-1],
    ]
    return [f"{value * 1e3:.2f}" for value in picks]


def table(idle: LagMeter, busy: LagMeter) -> str:
    """The two meters side by side, one line per measure."""
    rows = [
        ("timer lateness (ms)", idle.lags, busy.lags),
        ("  less the thread's run-queue wait", idle.own_lags, busy.own_lags),
        ("loop thread CPU between ticks (ms)", idle.cpu, busy.cpu),
        ("garbage collection pause (ms)", idle.collections, busy.collections),
    ]
    lines = [f"{'':36}{'idle loop':>32}    {'re-resolving':>32}"]
    lines.append(f"{'':36}{'p50   p99 p99.9   max':>32}    {'p50   p99 p99.9   max':>32}")
    for name, quiet, loaded in rows:
        left = " ".join(f"{v:>5}" for v in _figures(quiet))
        right = " ".join(f"{v:>5}" for v in _figures(loaded))
        lines.append(f"{name:<36}{left:>32}    {right:>32}")
    for name, quiet, loaded in (
        ("ticks", idle.lags, busy.lags),
        (
            "ticks later than 5 ms, less run queue",
            [x for x in idle.own_lags if x > 0.005],
            [x for x in busy.own_lags if x > 0.005],
        ),
        (
            "ticks later than 5 ms",
            [x for x in idle.lags if x > 0.005],
            [x for x in busy.lags if x > 0.005],
        ),
        (
            "ticks after > 5 ms of loop CPU",
            [x for x in idle.cpu if x > 0.005],
            [x for x in busy.cpu if x > 0.005],
        ),
        ("collections", idle.collections, busy.collections),
    ):
        lines.append(f"{name:<36}{len(quiet):>32}    {len(loaded):>32}")
    return "\n".join(lines)


async def metered(seconds: float) -> LagMeter:
    """The meter on a loop that does nothing else for ``seconds``: what the machine adds."""
    meter = LagMeter(asyncio.get_running_loop())
    meter.start()
    await asyncio.sleep(seconds)
    meter.stop()
    return meter


async def main(upstreams: int, seconds: float, flip: float) -> None:
    with tempfile.TemporaryDirectory() as directory, DnsServer(Path(directory), ttl=1) as dns:
        dns.publish_all(addresses(upstreams, 0))
        gateway = Gateway(
            options=GatewayOptions(
                resolvers=(dns.address,), discovery_min_ttl=1.0, discovery_max_ttl=1.0
            )
        )
        started = time.perf_counter()
        await gateway.apply(snapshot(upstreams))
        print(f"first answers of {upstreams} upstreams: {time.perf_counter() - started:.2f} s")
        settle_heap()  # as `portico gateway` does once it serves
        live = gateway.discovery.live()
        pacer = gateway.discovery.pacer
        meter = LagMeter(asyncio.get_running_loop())
        meter.start()
        resolutions = sum(u.resolutions for u in live.values())
        changes = sum(u.changes for u in live.values())
        steps, waits = pacer.steps, pacer.waits
        cpu = time.process_time()
        generation = 0
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            await asyncio.sleep(flip)
            generation += 1
            # (writing the hosts file is the bench's work, not the gateway's: off the loop)
            await asyncio.to_thread(dns.publish_all, addresses(upstreams, generation))
        meter.stop()
        cpu = time.process_time() - cpu
        resolutions = sum(u.resolutions for u in live.values()) - resolutions
        changes = sum(u.changes for u in live.values()) - changes
        failures = sum(1 for u in live.values() if u.error is not None)
        steps, waits = pacer.steps - steps, pacer.waits - waits
        # the idle meter in the same process, its heap settled the same way, nothing resolving
        await gateway.close()
        idle = await metered(seconds / 2)
    print(
        f"{seconds:.0f} s: {resolutions} resolutions ({resolutions / seconds:.0f}/s), "
        f"{changes} changes of nodes, {failures} upstreams failing at the end; process CPU "
        f"{cpu / seconds * 100:.0f}% of a core ({cpu / max(1, resolutions) * 1e6:.0f} us a "
        f"resolution, c-ares' thread included); {steps} paced steps, {waits} waits for a "
        "later turn"
    )
    print(f"a {TICK * 1e3:g} ms timer, the idle loop for {seconds / 2:.0f} s:")
    print(table(idle, meter))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--upstreams", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--flip", type=float, default=5.0, help="seconds between changes")
    arguments = parser.parse_args()
    use_uvloop()
    asyncio.run(main(arguments.upstreams, arguments.seconds, arguments.flip))
