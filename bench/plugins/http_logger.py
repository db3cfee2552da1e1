"""http-logger: every request logged, batches of 1000 POSTed to an HTTP receiver on loopback:
nginx answering 204 to each (a Python receiver's CPU, beside the gateway's on this 2-core
machine, was part of the figure), which counts the batches it took; the gateway's count of
dropped entries (/metrics) says whether every batch was accepted."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from bench_plugins import Case, Setup, nginx_sink


@contextlib.contextmanager
def _receiver(work: Path) -> Iterator[Setup]:
    with nginx_sink(work, "http-receiver", "return 204;") as (url, setup):
        config = {"uri": f"{url}/logs", "batch_max_size": 1000}
        setup.attach = [{"name": "http-logger", "scope": "route", "order": 950, "config": config}]
        yield setup


CASES = [Case("http-logger", 0.9, _receiver)]
