"""The gateway's processes keep and reuse large blocks (``runner.reuse_large_blocks``): a
batch's buffers, allocated and freed together, come back without new pages. Measured by the
page faults of a process that allocates and frees eight 700 KB buffers at a time (what a
Kafka produce request's copies of a batch take), with and without the call."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's malloc")

PROGRAM = """
import resource, sys
from portico.runner import reuse_large_blocks

done = reuse_large_blocks() if sys.argv[1] == "reuse" else None

def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt

def batch():
    buffers = [bytes(700_000) for _ in range(8)]  # (zero-filled: every page touched)
    del buffers

batch()
batch()
before = faults()
for _ in range(20):
    batch()
print(done, (faults() - before) / 20)
"""


def run(mode: str, **env: str) -> tuple[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", PROGRAM, mode],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **env},
    ).stdout.split()
    return out[0], float(out[1])


def test_large_blocks_come_back_without_new_pages() -> None:
    done, faults = run("reuse")
    assert done == "True"
    assert faults < 10  # (a few for the interpreter's own work)


def test_without_it_each_batch_faults_its_pages_in_again() -> None:
    # what the call changes: glibc's defaults hand the freed blocks back to the system
    done, faults = run("default")
    assert done == "None"
    assert faults > 100  # 8 × 700 KB is ~1,400 pages; most come back new


def test_an_operators_malloc_settings_are_left_alone() -> None:
    done, _ = run("reuse", MALLOC_TRIM_THRESHOLD_="1048576")
    assert done == "False"
