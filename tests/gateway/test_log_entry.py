"""The loggers' entry (``telemetry.log_entry``): what its content tests (test_logger_*,
test_observability_runtime) cannot reach through a gateway."""

from __future__ import annotations

import random

from portico.gateway.telemetry.log_entry import _millis


def test_latencies_are_rounded_exactly_as_round_does() -> None:
    rng = random.Random(3)
    samples = [0.0, 0.0000005, 0.0000015, 0.0000625, 0.0012345, 2.675, 999.9999995, 1e6]
    samples += [rng.random() * 10 ** rng.randint(-7, 4) for _ in range(20_000)]
    samples += [round(rng.random(), 7) for _ in range(20_000)]  # halves of a microsecond
    for seconds in samples:
        assert _millis(seconds) == round(seconds * 1000, 3), seconds
