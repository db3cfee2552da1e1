"""What each plugin costs in instructions: the gateway's user-space instructions per request
with it / without it, counted by callgrind. Deterministic where req/s is not: the count of
the same build, case and request mix moves by well under 1 % from run to run whatever else
the machine does, so a change of a few per cent is seen, and no quiet machine is needed.

Each case of ``bench/plugins`` (``bench_plugins.py``'s, with the real servers it talks to)
runs a gateway node (``bench/gateway/portico_node.py``, compiled build) under
``valgrind --tool=callgrind`` with counting off; wrk warms it up, then counting is switched
on (``callgrind_control -i on``) for ``--seconds`` of wrk (one thread, ``--connections``,
the same 10 routes), off again, and the count is divided by the requests the gateway handled
meanwhile (the calls of its per-request log phase that callgrind recorded). The
baseline is the same gateway without plugins. A logger's batches are sent during the counted
window (batches of ``batch_max_size`` fill many times over), so their building and sending is
in the count; what the sink and wrk spend is not (other processes).

What this does not see: the kernel's share of a request (the syscalls a plugin adds), cache
misses, and the other processes on the machine. ``bench_plugins.py`` measures req/s for that.

    .venv/bin/python bench/bench_instructions.py [--only NAME] [--seconds 20]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "gateway"))

from bench_gateway import (  # noqa: E402
    BACKEND_ANSWER,
    free_port,
    need,
    need_current_build,
    serving_nginx,
)
from bench_plugins import Case, Setup, Target, cases, run_wrk  # noqa: E402

_TOTAL = re.compile(r"^totals:\s+(\d+)", re.MULTILINE)
#: the gateway's function called once per request (its log phase, whatever answered it): the
#: count of its calls is the count of requests handled while counting
_PER_REQUEST = "CPyDef_gateway___Gateway____log"
_NAMED = re.compile(r"^c?fn=\((\d+)\)(?: (.*))?$")
_CALLS = re.compile(r"^calls=(\d+)")
_REQUESTS = re.compile(r"(\d+) requests in")
#: where to keep each case's profile (--keep)
KEEP: Path | None = None


def _gateway_args(target: Target, backend_port: int) -> list[str]:
    setup = target.setup
    args = [
        sys.executable,
        str(HERE / "gateway" / "portico_node.py"),
        *("--port", str(target.port), "--routes", "10"),
        *("--upstream-port", str(setup.upstream_port or backend_port)),
        *("--attach", json.dumps(setup.attach), "--status-port", str(target.status_port)),
    ]
    for cidr in setup.egress_allow:
        args += ["--egress-allow", cidr]
    return args


def _callgrind(target: Target, backend_port: int, out: Path) -> subprocess.Popen[bytes]:
    args = [
        *("valgrind", "--tool=callgrind", "--instr-atstart=no"),
        f"--callgrind-out-file={out}",
        *_gateway_args(target, backend_port),
    ]
    env = {**os.environ, "PYTHONPATH": str(HERE.parent / "src"), "PORTICO_REQUIRE_NATIVE": "1"}
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert process.stdout is not None
    if process.stdout.readline().strip() != b"ready":
        raise SystemExit(f"the gateway of {target.name} did not start under valgrind")
    return process


def _control(pid: int, *flags: str) -> None:
    subprocess.run(["callgrind_control", *flags, str(pid)], check=True, capture_output=True)


def _wrk_requests(target: Target, work: Path, seconds: int, connections: int) -> int:
    """Requests completed by wrk in ``seconds`` (run_wrk's script, written by the warm-up,
    ``connections``). Nothing else may run while counting: requests wrk does not report
    (a warm-up of run_wrk's own, 50 connections for a second, once ran here) would be
    counted as instructions and not as requests, inflating the figures by 1-5 %, a
    different amount each run."""
    script = work / f"{target.name}.lua"
    out = subprocess.run(
        [
            *("wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "-s", str(script)),
            f"http://127.0.0.1:{target.port}",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    if "Non-2xx" in out:
        raise SystemExit(f"{target.name}: non-2xx answers\n{out}")
    found = _REQUESTS.search(out)
    assert found is not None, out
    return int(found.group(1))


def instructions_per_request(
    target: Target, work: Path, backend_port: int, seconds: int, connections: int
) -> float:
    out = work / f"{target.name}.callgrind"
    process = _callgrind(target, backend_port, out)
    try:
        for _ in range(3):  # warm-up: connections, caches, the collector's first passes
            run_wrk(target, work, 2)
        _control(process.pid, "-i", "on")
        requests = _wrk_requests(target, work, seconds, connections)
        time.sleep(0.2)  # the last answers' writes and their batch flushes
        _control(process.pid, "-i", "off")
        _control(process.pid, "-d")
    finally:
        process.terminate()
        process.wait(timeout=60)
    total = handled = 0
    for dump in work.glob(f"{out.name}*"):
        text = dump.read_text()
        found = _TOTAL.search(text)
        total += int(found.group(1)) if found else 0
        handled += _calls_of(text, _PER_REQUEST)
        if KEEP is not None and found and int(found.group(1)):
            shutil.copy(dump, KEEP / f"{target.name}.callgrind")  # for callgrind_annotate
        dump.unlink()
    # divided by the requests the gateway handled while counting, which callgrind saw: wrk's
    # own count (requests it completed within its window) moved the figure by ~2 % a run
    return total / (handled or requests)


def _calls_of(profile: str, function: str) -> int:
    """How many calls of ``function`` a callgrind profile records (callgrind names a
    function once, then by its number)."""
    names: dict[str, str] = {}
    calls, callee = 0, ""
    for line in profile.splitlines():
        named = _NAMED.match(line)
        if named is not None:
            number, name = named.groups()
            if name:
                names[number] = name
            if line.startswith("cfn="):
                callee = names.get(number, "")
            continue
        counted = _CALLS.match(line)
        if counted is not None and callee.endswith(function):
            calls += int(counted.group(1))
    return calls


def measure(case: Case, work: Path, backend_port: int, seconds: int, connections: int) -> str:
    with case.start(work) as setup:
        baseline = Target(f"{case.name}-baseline", free_port(), Setup(attach=[]))
        baseline.setup.method, baseline.setup.body = setup.method, setup.body
        baseline.setup.headers = {}
        baseline.setup.upstream_port = setup.upstream_port
        plugged = Target(case.name, free_port(), setup)
        base = instructions_per_request(baseline, work, backend_port, seconds, connections)
        with_plugin = instructions_per_request(plugged, work, backend_port, seconds, connections)
    ratio = base / with_plugin
    return (
        f"{case.name:<28}{base:>10.0f}{with_plugin:>10.0f}{with_plugin - base:>10.0f}"
        f"{ratio:>8.2f}  >= {case.goal}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", help="one case by name")
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--connections", type=int, default=10)
    parser.add_argument("--keep", type=Path, help="keep each profile there (callgrind_annotate)")
    args = parser.parse_args()
    global KEEP
    KEEP = args.keep
    if KEEP is not None:
        KEEP.mkdir(parents=True, exist_ok=True)
    need("wrk", "nginx", "valgrind", "callgrind_control")
    need_current_build()
    chosen: list[Case] = cases(args.only)
    if not chosen:
        raise SystemExit(f"no case named {args.only!r}")
    header = f"{'case':<28}{'without':>10}{'with':>10}{'added':>10}{'ratio':>8}  target"
    lines = []
    with tempfile.TemporaryDirectory(prefix="portico-bench-instr-") as tmp:
        work = Path(tmp)
        (work / "tmp").mkdir()
        with serving_nginx(work, "backend", BACKEND_ANSWER) as backend_port:
            print(header, flush=True)
            for case in chosen:
                lines.append(measure(case, work, backend_port, args.seconds, args.connections))
                print(lines[-1], flush=True)
    print(f"\ninstructions per request (callgrind, user space, {args.seconds} s of wrk):")
    print(header)
    print("\n".join(lines))


if __name__ == "__main__":
    if shutil.which("valgrind") is None:
        print("skipped: valgrind not installed")
        sys.exit(0)
    main()
