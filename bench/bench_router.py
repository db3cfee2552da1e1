"""Route matching and path normalisation, per request. Printed, never asserted.

Router: build time and matches per second over 10, 1,000 and 10,000 routes of a realistic
mix (static, ``:param``, prefix routes; several services, methods and hosts), the requests
spread over the whole route set with a share of misses and of method/host fall-throughs.
Matching must not grow with the number of routes: the ratio of the time per match at 10k
routes to that at 10 should be near 1.

normalize_path: a typical path (the fast path), a typical path with an escape, and a
hostile one (duplicate slashes, dot segments, mixed-case escapes).

    .venv/bin/python bench/bench_router.py
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from portico.gateway.routing.paths import normalize_path
from portico.gateway.routing.router import Router
from portico.gateway.snapshot import SnapshotRoute

SIZES = (10, 1_000, 10_000)
REQUESTS = 20_000
HOSTS = ["api.example.com", "*.tenant.example.com", "admin.example.com"]


def make_route(
    i: int, uri: str, methods: list[str], hosts: list[str], priority: int = 0
) -> SnapshotRoute:
    return SnapshotRoute(
        id=f"r{i}",
        api_id=f"api{i // 50}",
        api_name=f"api{i // 50}",
        revision_id="rev",
        revision_number=1,
        name=f"route-{i}",
        uri=uri,
        methods=methods,
        hosts=hosts,
        priority=priority,
        status=1,
        upstream_id="up",
        plugins=[],
    )


def make_routes(count: int) -> list[SnapshotRoute]:
    """A mix: per service (50 routes each) collections, items, sub-resources and a prefix."""
    routes = []
    for i in range(count):
        service = f"svc{i // 50}"
        kind = i % 5
        hosts = [HOSTS[i % 3]] if i % 4 == 0 else []
        if kind == 0:
            uri, methods = f"/{service}/v1/res{i}", ["GET", "POST"]
        elif kind == 1:
            uri, methods = f"/{service}/v1/res{i - 1}/:id", ["GET", "PUT", "DELETE"]
        elif kind == 2:
            uri, methods = f"/{service}/v1/res{i - 2}/:id/items/:item", ["GET"]
        elif kind == 3:
            uri, methods = f"/{service}/v2/res{i}/*", []
        else:
            uri, methods = f"/{service}/static/r{i}/index.html", ["GET"]
        routes.append(make_route(i, uri, methods, hosts, priority=i % 3))
    return routes


def make_requests(routes: list[SnapshotRoute], rng: random.Random) -> list[tuple[str, str, str]]:
    """Paths of random routes, made concrete; 10% misses, some refused methods or hosts."""
    out = []
    for _ in range(REQUESTS):
        route = rng.choice(routes)
        path = route.uri.replace(":id", str(rng.randrange(10**6))).replace(":item", "x7")
        path = path.replace("*", "deep/er/path")
        if rng.random() < 0.1:
            path += "/nope"
        method = rng.choice(route.methods) if route.methods and rng.random() < 0.9 else "PATCH"
        host = route.hosts[0].replace("*", "acme") if route.hosts else "api.example.com"
        out.append((method, host, path))
    return out


def per_second(call: Callable[[], object], count: int, repeat: int = 5) -> float:
    """Best of ``repeat`` runs of ``count`` calls, in calls per second."""
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - started)
    return count / best


def runner(router: Router, batch: list[tuple[str, str, str]]) -> Callable[[], None]:
    match = router.match

    def run() -> None:
        for method, host, path in batch:
            match(method, host, path)

    return run


def bench_router() -> None:
    """Two request mixes per size: spread over every route (the working set grows with the
    route set, CPU caches miss more) and hot (the first 10 routes, the same at every size:
    what the algorithm costs without the cache effect)."""
    rng = random.Random(7)
    print(f"router, {REQUESTS:,} requests per run, best of 5:")
    print(
        f"  {'routes':>7} {'build':>10} {'matches/s':>12} {'ns/match':>9} {'hit rate':>9}"
        f" {'hot ns/match':>13}"
    )
    spread, hot = {}, {}
    for size in SIZES:
        routes = make_routes(size)
        started = time.perf_counter()
        router = Router.build(routes)
        build = time.perf_counter() - started
        requests = make_requests(routes, rng)
        hot_requests = make_requests(routes[:10], rng)
        spread[size] = per_second(runner(router, requests), len(requests))
        hot[size] = per_second(runner(router, hot_requests), len(hot_requests))
        hits = sum(router.match(*r) is not None for r in requests) / len(requests)
        print(
            f"  {size:>7} {build * 1000:>8.1f}ms {spread[size]:>12,.0f}"
            f" {1e9 / spread[size]:>9.0f} {hits:>8.0%} {1e9 / hot[size]:>13.0f}"
        )
    small, large = SIZES[0], SIZES[-1]
    print(
        f"  time per match, {large:,} vs {small} routes:"
        f" spread {spread[small] / spread[large]:.2f}x, hot {hot[small] / hot[large]:.2f}x"
        " (flat = 1)"
    )


def bench_normalize() -> None:
    cases = {
        "typical": "/api/v1/users/123",
        "escaped": "/api/v1/search/caf%c3%a9/%7Ejo",
        "hostile": "/api//v1/./x/%2E%2e/users//%7Ejo%2fdoe/./a/b/../../123/",
    }
    print("normalize_path (best of 5):")
    for name, raw in cases.items():
        batch = [raw] * REQUESTS

        def run(batch: list[str] = batch) -> None:
            for path in batch:
                normalize_path(path)

        rate = per_second(run, len(batch))
        print(f"  {name:<8} {rate:>12,.0f}/s {1e9 / rate:>7.0f} ns  {raw} -> {normalize_path(raw)}")


if __name__ == "__main__":
    bench_router()
    bench_normalize()
