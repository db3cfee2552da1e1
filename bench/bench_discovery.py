"""The event loop's lag while a gateway keeps 1,000 upstreams with DNS discovery current.
Printed, never asserted.

A gateway (uvloop, the build in use) serves one environment of 1,000 upstreams, each with
``discovery: {type: dns, serviceName: svc<i>.test:8080}``, resolved by a real dnsmasq
(tests/support/dnsserver.py) whose records have a TTL of 1 s: with the bounds at 1 s every
upstream is resolved again about every second (two queries, A and AAAA: ~2,000 queries a
second). Every ``--flip`` seconds half of the names change address, so that half of the
upstreams also rebuild their balancer and tell their health checker. Meanwhile a timer
asks to run every millisecond and records how late it runs (the loop's lag: nothing else
can run while a callback holds the loop) and how much CPU the loop's thread spent since its
previous run (what the loop did itself; the rest of a lag is the machine's scheduler, which
a shared machine adds: the same meter on an idle loop is printed first, for comparison).

    .venv/bin/python bench/bench_discovery.py [--upstreams 1000] [--seconds 20]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
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
    """A callback that asks to run every TICK seconds and records how late it ran."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.lags: list[float] = []
        self.cpu: list[float] = []
        self._due = 0.0
        self._cpu_at = 0.0
        self._handle: asyncio.TimerHandle | None = None

    def start(self) -> None:
        self._due = time.perf_counter() + TICK
        self._cpu_at = time.thread_time()
        self._handle = self.loop.call_later(TICK, self._tick)

    def _tick(self) -> None:
        now = time.perf_counter()
        cpu = time.thread_time()
        self.lags.append(max(0.0, now - self._due))
        self.cpu.append(cpu - self._cpu_at)
        self._due = now + TICK
        self._cpu_at = cpu
        self._handle = self.loop.call_later(TICK, self._tick)

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()


def _quantiles(values: list[float]) -> str:
    ordered = sorted(values)
    p99 = ordered[int(len(ordered) * 0.99)]
    p999 = ordered[int(len(ordered) * 0.999)]
    return (
        f"median {statistics.median(ordered) * 1e3:.2f} ms, p99 {p99 * 1e3:.2f} ms, "
        f"p99.9 {p999 * 1e3:.2f} ms, max {ordered[-1] * 1e3:.2f} ms"
    )


async def idle(seconds: float) -> None:
    """The same meter on a loop that does nothing else: what the machine alone adds."""
    meter = LagMeter(asyncio.get_running_loop())
    meter.start()
    await asyncio.sleep(seconds)
    meter.stop()
    print(f"idle loop, lag over {len(meter.lags)} ticks: {_quantiles(meter.lags)}")
    print(f"idle loop, thread CPU between two ticks: {_quantiles(meter.cpu)}")


async def main(upstreams: int, seconds: float, flip: float) -> None:
    await idle(seconds / 2)
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
        meter = LagMeter(asyncio.get_running_loop())
        meter.start()
        resolutions = sum(u.resolutions for u in live.values())
        changes = sum(u.changes for u in live.values())
        cpu = time.process_time()
        generation = 0
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            await asyncio.sleep(flip)
            generation += 1
            dns.publish_all(addresses(upstreams, generation))
        meter.stop()
        cpu = time.process_time() - cpu
        resolutions = sum(u.resolutions for u in live.values()) - resolutions
        changes = sum(u.changes for u in live.values()) - changes
        failures = sum(1 for u in live.values() if u.error is not None)
        await gateway.close()
    print(
        f"{seconds:.0f} s: {resolutions} resolutions ({resolutions / seconds:.0f}/s), "
        f"{changes} changes of nodes, {failures} upstreams failing at the end; process CPU "
        f"{cpu / seconds * 100:.0f}% of a core ({cpu / max(1, resolutions) * 1e6:.0f} us a "
        "resolution, c-ares' thread included)"
    )
    print(f"loop lag over {len(meter.lags)} ticks: {_quantiles(meter.lags)}")
    print(f"loop thread CPU between two ticks: {_quantiles(meter.cpu)}")
    over = sum(1 for lag in meter.lags if lag > 0.005)
    print(f"ticks later than 5 ms: {over}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--upstreams", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--flip", type=float, default=5.0, help="seconds between changes")
    arguments = parser.parse_args()
    use_uvloop()
    asyncio.run(main(arguments.upstreams, arguments.seconds, arguments.flip))
