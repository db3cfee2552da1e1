"""The gateway against nginx, with wrk, on this machine. Printed as ratios, never asserted.

One nginx backend (one worker, a fixed 200 answer) serves both proxies:

* nginx as a reverse proxy (one worker, upstream keep-alive), the reference;
* Portico's gateway (one process, uvloop) with 10 routes, no plugins;
* the same with key-auth + limit-count on every route;
* the same with key-auth + product-quota on every route (an app whose product covers them);
* the same with 10,000 routes.

wrk (one thread, 50 connections) spreads its requests over the routes with a Lua script. The
targets take turns, round after round, so a slow moment of the machine hits all of them; the
median of the rounds is printed. Peak RSS of the 10,000-route gateway is read from
/proc/<pid>/status (VmHWM).

Targets from the gateway issue: no plugins >= 0.6 of nginx; key-auth + limit-count >= 0.5;
10,000 routes >= 0.9 of 10 routes; RSS <= 200 MB. From the products issue: key-auth +
product-quota >= 0.9 of key-auth + limit-count (the same work: one lookup, one counter).

    make bench        (installs wrk and nginx-light through apt when run as root)
    .venv/bin/python bench/bench_gateway.py [--rounds 3] [--seconds 5]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "gateway"))

from portico_node import HOST, KEY  # noqa: E402  (the node script's own constants)

#: nginx answering every request itself (one worker, kept-alive connections): the backend
#: here, and the stand-in servers of bench/plugins; {location}: what it answers
NGINX_ANSWERING = """
worker_processes 1;
daemon off;
pid {dir}/{name}.pid;
error_log {dir}/{name}.err warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    client_body_temp_path {dir}/tmp;
    keepalive_requests 1000000;
    server {{
        listen 127.0.0.1:{port};
        location / {{ {location} }}
    }}
}}
"""
#: the backend's answer (the proxies' and the gateway's upstream)
BACKEND_ANSWER = 'return 200 "ok\\n";'
NGINX_PROXY = """
worker_processes 1;
daemon off;
pid {dir}/proxy.pid;
error_log {dir}/proxy.err warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    client_body_temp_path {dir}/tmp;
    proxy_temp_path {dir}/tmp;
    keepalive_requests 1000000;
    upstream backend {{
        server 127.0.0.1:{backend};
        keepalive 64;
        keepalive_requests 1000000;
    }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://backend;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        }}
    }}
}}
"""
WRK_SCRIPT = """
local paths = {{}}
for i = 0, 999 do
    paths[#paths + 1] = "/r" .. ((i * 7919) % {routes}) .. "/items/" .. i
end
local n = 0
wrk.headers["Host"] = "{host}"
{extra}
request = function()
    n = n + 1
    return wrk.format("GET", paths[(n % #paths) + 1])
end
"""


@dataclass
class Target:
    name: str
    port: int
    routes: int
    plugins: str = ""  # "", "limit" or "quota" (portico_node.py's --plugins)
    process: subprocess.Popen[bytes] | None = None
    #: the process serving the requests (nginx: its one worker, not the master)
    serving_pid: int = 0
    rates: list[float] = field(default_factory=list)
    p99s: list[float] = field(default_factory=list)
    #: CPU time (user + system) the serving process spent per request, in microseconds
    cpu_us: list[float] = field(default_factory=list)


def need_current_build() -> None:
    """Stop unless the gateway's compiled modules are built from the current source: the
    node would run the interpreted ones instead (about three times the instructions a
    request), and every figure would be wrong without a word. (``make bench`` builds them.)"""
    from portico import native

    if not native.current(native.build_dir()):
        raise SystemExit(
            "the compiled gateway modules are not built from the current source: "
            "run `make native` first (or `make bench`)"
        )


def need(*tools: str) -> None:
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        print(f"skipped: {', '.join(missing)} not installed (scripts/ensure-bench-packages.sh)")
        sys.exit(0)


def start_nginx(work: Path, name: str, config: str) -> subprocess.Popen[bytes]:
    path = work / f"{name}.conf"
    path.write_text(config)
    return subprocess.Popen(
        ["nginx", "-p", str(work), "-c", str(path), "-e", str(work / f"{name}.err")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def nginx_answering(work: Path, name: str, port: int, location: str) -> str:
    """The config of an nginx answering on ``port`` with ``location``'s directives (e.g.
    ``return 200 "ok";``); its files are ``work``/``name``.*."""
    return NGINX_ANSWERING.format(dir=work, name=name, port=port, location=location)


@contextlib.contextmanager
def serving_nginx(work: Path, name: str, location: str) -> Iterator[int]:
    """An nginx answering with ``location`` (see :func:`nginx_answering`) on a free port,
    which it yields once nginx listens; stopped on exit."""
    port = free_port()
    process = start_nginx(work, name, nginx_answering(work, name, port, location))
    try:
        wait_listening(port)
        yield port
    finally:
        process.terminate()
        process.wait(timeout=10)


def start_portico(port: int, routes: int, backend: int, plugins: str) -> subprocess.Popen[bytes]:
    args = [
        sys.executable,
        str(HERE / "gateway" / "portico_node.py"),
        "--port",
        str(port),
        "--routes",
        str(routes),
        "--upstream-port",
        str(backend),
    ]
    if plugins:
        args += ["--plugins", plugins]
    env = {**os.environ, "PYTHONPATH": str(HERE.parent / "src")}
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert process.stdout is not None
    if process.stdout.readline().strip() != b"ready":
        raise SystemExit(f"the Portico gateway with {routes} routes did not start")
    return process


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_listening(port: int) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise SystemExit(f"nothing listens on {port}")


def to_ms(value: str) -> float:
    number, unit = re.fullmatch(r"([\d.]+)(us|ms|s)", value).groups()  # type: ignore[union-attr]
    return float(number) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue  # gone meanwhile
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_wrk(target: Target, work: Path, seconds: float) -> tuple[float, float, float]:
    """Requests per second, p99 in ms, and CPU microseconds per request of the target."""
    extra = f'wrk.headers["apikey"] = "{KEY}"' if target.plugins else ""
    script = work / f"{target.name}.lua"
    script.write_text(WRK_SCRIPT.format(routes=target.routes, host=HOST, extra=extra))
    cpu_before = cpu_seconds(target.serving_pid)
    out = subprocess.run(
        [
            "wrk",
            "-t1",
            "-c50",
            f"-d{int(seconds)}s",
            "--latency",
            "-s",
            str(script),
            f"http://127.0.0.1:{target.port}",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    cpu = cpu_seconds(target.serving_pid) - cpu_before
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    requests = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    p99 = to_ms(re.search(r"99%\s+([\d.]+\w+)", out).group(1))  # type: ignore[union-attr]
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if errors:
        raise SystemExit(f"{target.name}: {errors.group(1)} non-2xx answers\n{out}")
    return rate, p99, cpu / requests * 1e6


def peak_rss_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    kib = int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1))  # type: ignore[union-attr]
    return kib / 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=5)
    args = parser.parse_args()
    need("wrk", "nginx")
    need_current_build()
    with tempfile.TemporaryDirectory(prefix="portico-bench-") as tmp:
        work = Path(tmp)
        (work / "tmp").mkdir()
        backend_port = free_port()
        processes = [
            start_nginx(
                work, "backend", nginx_answering(work, "backend", backend_port, BACKEND_ANSWER)
            )
        ]
        targets = [
            Target("nginx", free_port(), 10),
            Target("portico-10", free_port(), 10),
            Target("portico-10-auth-limit", free_port(), 10, plugins="limit"),
            Target("portico-10k", free_port(), 10_000),
            Target("portico-10-auth-quota", free_port(), 10, plugins="quota"),
        ]
        try:
            wait_listening(backend_port)
            nginx = targets[0]
            processes.append(
                start_nginx(
                    work,
                    "proxy",
                    NGINX_PROXY.format(dir=work, port=nginx.port, backend=backend_port),
                )
            )
            wait_listening(nginx.port)
            workers = children(processes[-1].pid)
            if len(workers) != 1:
                raise SystemExit(f"nginx should run one worker, found {len(workers)}")
            nginx.serving_pid = workers[0]
            for target in targets[1:]:
                target.process = start_portico(
                    target.port, target.routes, backend_port, target.plugins
                )
                target.serving_pid = target.process.pid
                processes.append(target.process)
            for target in targets:  # warm-up: connections, caches, the allocator
                run_wrk(target, work, 1)
            for round_number in range(args.rounds):
                for target in targets:
                    rate, p99, cpu_us = run_wrk(target, work, args.seconds)
                    target.rates.append(rate)
                    target.p99s.append(p99)
                    target.cpu_us.append(cpu_us)
                print(f"round {round_number + 1}/{args.rounds} done", flush=True)
            big = targets[3]
            assert big.process is not None
            rss = peak_rss_mb(big.process.pid)
        finally:
            for process in processes:
                process.terminate()
            for process in processes:
                process.wait(timeout=10)
    report(targets, rss, args)


def report(targets: list[Target], rss: float, args: argparse.Namespace) -> None:
    median = {t.name: statistics.median(t.rates) for t in targets}
    p99 = {t.name: statistics.median(t.p99s) for t in targets}
    cpu = {t.name: statistics.median(t.cpu_us) for t in targets}
    print(f"\nwrk -t1 -c50, {args.rounds} rounds of {args.seconds:g} s, medians:")
    # busy: the share of one core the serving process used (1.00: CPU-bound)
    print(f"{'target':<24}{'req/s':>10}{'p99 ms':>10}{'CPU us/req':>12}{'busy':>7}")
    for target in targets:
        name = target.name
        busy = cpu[name] * median[name] / 1e6
        print(f"{name:<24}{median[name]:>10.0f}{p99[name]:>10.2f}{cpu[name]:>12.1f}{busy:>7.2f}")
    nginx = median["nginx"]
    rows = [
        ("no plugins / nginx", median["portico-10"] / nginx, 0.6),
        ("key-auth+limit-count / nginx", median["portico-10-auth-limit"] / nginx, 0.5),
        ("10,000 routes / 10 routes", median["portico-10k"] / median["portico-10"], 0.9),
        (
            "key-auth+product-quota / +limit-count",
            median["portico-10-auth-quota"] / median["portico-10-auth-limit"],
            0.9,
        ),
    ]
    print()
    for label, ratio, goal in rows:
        print(f"{label:<32}{ratio:>6.2f}   (target >= {goal})")
    print(f"{'peak RSS, 10,000 routes':<32}{rss:>6.0f} MB (target <= 200)")
    # CPU per request of the serving process: what each request costs, far less moved than
    # req/s by where the scheduler puts wrk, the backend and the proxy on the machine's cores
    # (nginx's req/s moves with that placement; a proxy that is busy all the time does not).
    print("\nCPU per request (not a target: the cost of a request, less moved by placement):")
    for label, name in (
        ("no plugins", "portico-10"),
        ("key-auth+limit-count", "portico-10-auth-limit"),
        ("key-auth+product-quota", "portico-10-auth-quota"),
    ):
        print(f"{'nginx / Portico, ' + label:<44}{cpu['nginx'] / cpu[name]:>6.2f}")


if __name__ == "__main__":
    main()
