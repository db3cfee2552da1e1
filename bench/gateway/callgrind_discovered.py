"""Instructions per proxied request through an upstream with DNS discovery against one with
the same node listed, counted by callgrind (user space, deterministic: the machine's load does
not move it). Printed, never asserted; not part of ``make bench`` (valgrind takes minutes).

For each case, ``portico_node.py`` (the build in use: run ``make native`` first) runs under
``valgrind --tool=callgrind``; after a warm-up the counters are zeroed
(``callgrind_control -z``), ``--requests`` GETs are sent one after another on one kept-alive
connection, and the counters dumped: the instructions of the node's process in that window,
divided by the requests. The backend is nginx answering 200 by itself; the DNS server is
dnsmasq (tests/support/dnsserver.py) with a TTL longer than the run, so that the window holds
the requests only (a resolution's own cost is ``bench/bench_discovery.py``'s).

    .venv/bin/python bench/gateway/callgrind_discovered.py [--requests 5000]
"""

from __future__ import annotations

import argparse
import http.client
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # bench_gateway
sys.path.insert(0, str(HERE.parents[1]))  # tests.support
from bench_gateway import BACKEND_ANSWER, serving_nginx  # noqa: E402

from tests.support.dnsserver import DnsServer  # noqa: E402
from tests.support.ports import free_port  # noqa: E402

NAME = "backend.bench.test"
HOST = "bench.example.com"


def send(port: int, requests: int) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    for _ in range(requests):
        connection.request("GET", "/r0/x", headers={"Host": HOST})
        response = connection.getresponse()
        response.read()
        assert response.status == 200, response.status
    connection.close()


def ready(port: int) -> bool:
    try:
        send(port, 1)
    except (OSError, AssertionError, http.client.HTTPException):
        return False
    return True


def control(pid: int, action: str) -> None:
    subprocess.run(["callgrind_control", action, str(pid)], check=True, capture_output=True)


def instructions(work: Path, case: str, backend: int, resolver: str, requests: int) -> int:
    port = free_port()
    out = work / f"callgrind.{case}"
    node = [
        sys.executable,
        str(HERE / "portico_node.py"),
        f"--port={port}",
        "--routes=10",
        f"--upstream-port={backend}",
    ]
    if case == "discovered":
        node += [f"--discovery={NAME}", f"--resolver={resolver}"]
    process = subprocess.Popen(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *node],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 300
        while not ready(port):
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError(f"the {case} node did not start")
            time.sleep(1)
        send(port, 500)  # warm-up: pools, caches, the first collections
        subprocess.run(
            ["callgrind_control", "-z", str(process.pid)], check=True, capture_output=True
        )
        send(port, requests)
        subprocess.run(
            ["callgrind_control", "-d", str(process.pid)], check=True, capture_output=True
        )
    finally:
        process.terminate()
        process.wait(timeout=60)
    dumps = sorted(work.glob(f"callgrind.{case}.*"))
    totals = [re.search(r"^(?:summary|totals): (\d+)", d.read_text(), re.M) for d in dumps]
    counted = [int(found.group(1)) for found in totals if found]
    return counted[0]  # the dump made right after the requests


def main(requests: int) -> None:
    with tempfile.TemporaryDirectory() as directory:
        work = Path(directory)
        with (
            serving_nginx(work, "backend", BACKEND_ANSWER) as backend,
            DnsServer(work / "dns", ttl=3600) as dns,
        ):
            dns.publish(NAME, ["127.0.0.1"])
            counts = {
                case: instructions(work, case, backend, dns.address, requests)
                for case in ("static", "discovered")
            }
    static, discovered = counts["static"] / requests, counts["discovered"] / requests
    print(f"static node listed:   {static:,.0f} instructions a request")
    print(f"discovered by DNS:    {discovered:,.0f} instructions a request")
    print(f"discovered / static:  {discovered / static:.4f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=5000)
    main(parser.parse_args().requests)
