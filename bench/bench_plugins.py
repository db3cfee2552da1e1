"""What each plugin costs: the gateway's throughput with it / without it, in one run.

Every case of ``bench/plugins/*.py`` (each module exports ``CASES``) is measured against the
same gateway without plugins, with wrk (one thread, 50 connections) on 10 routes to one nginx
backend. A case starts the real servers its plugin talks to (a directory, a policy engine, a
collector...) and names the plugins attached to every route, the request wrk sends and the
target ratio (the issue: loggers and trace-export >= 0.9, authentication plugins with their
cache warm >= 0.8). The baseline and the case take turns, round after round, so a slow moment
of the machine hits both; medians are printed, never asserted, with each round's own ratio
(on a shared 2-core machine one round's ratio moves by up to ±0.1: many short rounds,
``--rounds 15 --seconds 2``, give a median that moves far less). A logger's line ends with what
was delivered: the drops the gateway counted in /metrics once the last batch went out (0
when every batch was taken), and what the sink counted when it can tell.

    .venv/bin/python bench/bench_plugins.py [--only NAME] [--rounds 3] [--seconds 5]
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "gateway"))

from bench_gateway import (  # noqa: E402  (the gateway bench's helpers)
    BACKEND_ANSWER,
    cpu_seconds,
    free_port,
    need,
    need_current_build,
    serving_nginx,
    to_ms,
)
from portico_node import HOST  # noqa: E402


@dataclass
class Setup:
    """What a case's servers, once started, give the gateway and wrk."""

    #: plugins attached to every route: [{"name", "scope", "order", "config"}]
    attach: list[dict[str, Any]]
    headers: dict[str, str] = field(default_factory=dict)
    method: str = "GET"
    body: str = ""
    #: the port the routes' upstream listens on (None: the shared nginx backend)
    upstream_port: int | None = None
    #: CIDRs the plugins may call (their servers listen on loopback)
    egress_allow: tuple[str, ...] = ("127.0.0.0/8",)
    #: a logger's case: after the rounds, wait for the last batch to go out, then report the
    #: drops the gateway counted (/metrics) and what ``delivered`` says the sink took
    logs: bool = False
    delivered: Callable[[], str] | None = None


@dataclass
class Case:
    name: str
    goal: float
    #: starts the case's servers under ``work`` and yields its setup; stops them on exit
    start: Callable[[Path], AbstractContextManager[Setup]]
    #: what the case is measured against (None: the same gateway without plugins), e.g. the
    #: same route with key-auth for another authentication plugin
    reference: Setup | None = None
    #: a goal in requests per second of the case itself rather than a ratio (token
    #: issuance: tokens/s); the ratio is still printed
    rate_goal: float | None = None


@dataclass
class Target:
    name: str
    port: int
    setup: Setup
    status_port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None
    rates: list[float] = field(default_factory=list)
    p99s: list[float] = field(default_factory=list)
    #: the gateway process's CPU time (user + system) per request, microseconds
    cpu: list[float] = field(default_factory=list)


WRK_SCRIPT = """
local n = 0
wrk.method = {method}
wrk.body = {body}
wrk.headers["Host"] = "{host}"
{headers}
request = function()
    n = n + 1
    return wrk.format(nil, "/r" .. (n % 10) .. "/items/" .. n)
end
"""


def lua_string(text: str) -> str:
    return json.dumps(text)  # a JSON string is a valid Lua string literal for these values


def cases(only: str | None) -> list[Case]:
    found: list[Case] = []
    for path in sorted((HERE / "plugins").glob("*.py")):
        spec = importlib.util.spec_from_file_location(f"bench_plugins_{path.stem}", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        found.extend(module.CASES)
    return [case for case in found if only is None or case.name == only]


def start_gateway(target: Target, backend_port: int) -> subprocess.Popen[bytes]:
    setup = target.setup
    args = [
        sys.executable,
        str(HERE / "gateway" / "portico_node.py"),
        "--port",
        str(target.port),
        "--routes",
        "10",
        "--upstream-port",
        str(setup.upstream_port or backend_port),
        "--attach",
        json.dumps(setup.attach),
        "--status-port",
        str(target.status_port),
    ]
    for cidr in setup.egress_allow:
        args += ["--egress-allow", cidr]
    env = {**os.environ, "PYTHONPATH": str(HERE.parent / "src")}
    process = subprocess.Popen(args, stdout=subprocess.PIPE, env=env)
    assert process.stdout is not None
    if process.stdout.readline().strip() != b"ready":
        raise SystemExit(f"the gateway of {target.name} did not start")
    return process


def run_wrk(target: Target, work: Path, seconds: float) -> tuple[float, float]:
    setup = target.setup
    script = work / f"{target.name}.lua"
    headers = "\n".join(
        f"wrk.headers[{lua_string(k)}] = {lua_string(v)}" for k, v in setup.headers.items()
    )
    script.write_text(
        WRK_SCRIPT.format(
            method=lua_string(setup.method),
            body=lua_string(setup.body) if setup.body else "nil",
            host=HOST,
            headers=headers,
        )
    )
    out = subprocess.run(
        [
            *("wrk", "-t1", "-c50", f"-d{int(seconds)}s", "--latency", "-s", str(script)),
            f"http://127.0.0.1:{target.port}",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if errors:
        raise SystemExit(f"{target.name}: {errors.group(1)} non-2xx answers\n{out}")
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    p99 = to_ms(re.search(r"99%\s+([\d.]+\w+)", out).group(1))  # type: ignore[union-attr]
    return rate, p99


def measure(case: Case, work: Path, backend_port: int, rounds: int, seconds: int) -> str:
    with case.start(work) as setup:
        reference = case.reference or Setup(attach=[])
        baseline = Target(f"{case.name}-baseline", free_port(), reference)
        plugged = Target(case.name, free_port(), setup)
        if case.reference is None:
            baseline.setup.method, baseline.setup.body = setup.method, setup.body
            baseline.setup.upstream_port = setup.upstream_port
        targets = [baseline, plugged]
        try:
            for target in targets:
                target.process = start_gateway(target, backend_port)
            for target in targets:  # warm-up: connections, caches (a plugin's warm cache)
                run_wrk(target, work, 1)
            for _ in range(rounds):
                for target in targets:
                    assert target.process is not None
                    before = cpu_seconds(target.process.pid)
                    rate, p99 = run_wrk(target, work, seconds)
                    spent = cpu_seconds(target.process.pid) - before
                    target.rates.append(rate)
                    target.p99s.append(p99)
                    target.cpu.append(spent / (rate * seconds) * 1e6)
            delivery = delivery_report(plugged) if setup.logs else ""
        finally:
            for target in targets:
                if target.process is not None:
                    target.process.terminate()
                    target.process.wait(timeout=10)
    base, with_plugin = statistics.median(baseline.rates), statistics.median(plugged.rates)
    ratio = with_plugin / base
    if case.rate_goal is not None:
        verdict = "ok" if with_plugin >= case.rate_goal else "BELOW"
        goal = f"{case.rate_goal:.0f}/s"
    else:
        verdict = "ok" if ratio >= case.goal else "BELOW"
        goal = str(case.goal)
    spent = (statistics.median(baseline.cpu), statistics.median(plugged.cpu))
    cpu = f"CPU/request {spent[0]:.1f} / {spent[1]:.1f} us"
    # each round's pair (the baseline, then the case, back to back): how far apart the
    # rounds are says how much of the ratio is the machine's noise
    paired = " ".join(f"{p / b:.2f}" for b, p in zip(baseline.rates, plugged.rates, strict=True))
    return (
        f"{case.name:<28}{base:>10.0f}{with_plugin:>10.0f}{ratio:>8.2f}  >= {goal:<5}"
        f"{verdict:>6}   rounds {paired}, p99 {statistics.median(plugged.p99s):.2f} ms, {cpu}"
        f"{delivery}"
    )


#: seconds a logger's last batch may wait before it is sent (the loggers' inactive_timeout)
LAST_BATCH = 6.0


def delivery_report(target: Target) -> str:
    """Whether a logger delivered what it logged: the drops the gateway counted (every
    failed or refused send, every entry a full queue turned away) and what the sink says it
    took, once the last batch went out."""
    time.sleep(LAST_BATCH)
    url = f"http://127.0.0.1:{target.status_port}/metrics"
    with urllib.request.urlopen(url, timeout=5) as answer:
        text = answer.read().decode()
    dropped = sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("portico_log_entries_dropped_total{")
    )
    sink = target.setup.delivered() if target.setup.delivered is not None else ""
    return f", dropped {dropped:.0f}" + (f", {sink}" if sink else "")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", help="one case by name")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=5)
    args = parser.parse_args()
    need("wrk", "nginx")
    need_current_build()
    chosen = cases(args.only)
    if not chosen:
        raise SystemExit(f"no case named {args.only!r}")
    lines = []
    with tempfile.TemporaryDirectory(prefix="portico-bench-plugins-") as tmp:
        work = Path(tmp)
        (work / "tmp").mkdir()
        with serving_nginx(work, "backend", BACKEND_ANSWER) as backend_port:
            for case in chosen:
                lines.append(measure(case, work, backend_port, args.rounds, args.seconds))
                print(lines[-1], flush=True)
    print(f"\nwrk -t1 -c50, 10 routes, {args.rounds} rounds of {args.seconds} s, medians:")
    print(f"{'case':<28}{'without':>10}{'with':>10}{'ratio':>8}  target")
    print("\n".join(lines))


@contextlib.contextmanager
def no_servers(setup: Setup) -> Iterator[Setup]:
    """For a case whose plugin talks to no server of its own."""
    yield setup


@contextlib.contextmanager
def nginx_sink(work: Path, name: str, answer: str) -> Iterator[tuple[str, Setup]]:
    """For a logger's case: an nginx answering every request with ``answer`` (its
    ``location`` directives) and logging each one. Yields its URL and a ``Setup`` whose
    ``delivered`` counts the batches it took (the case fills in ``attach``)."""
    log = work / f"{name}.access"
    with serving_nginx(work, name, f"access_log {log}; {answer}") as port:

        def delivered() -> str:
            posts = log.read_text().count('"POST ') if log.exists() else 0
            return f"the sink took {posts} batches"

        yield f"http://127.0.0.1:{port}", Setup(attach=[], logs=True, delivered=delivered)


if __name__ == "__main__":
    main()
