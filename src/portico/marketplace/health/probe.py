"""One health check: ``GET`` the health URL through the SSRF guard (the marketplace's egress
policy, redirects checked one by one) and read a status from the answer.

* **up**: a 2xx answer within ``PORTICO_MARKETPLACE_HEALTH_DEGRADED_MS``;
* **degraded**: a 2xx answer slower than that, or a JSON body whose ``status`` says so
  (``warn``, ``degraded``: the IETF health-check format and common frameworks' words);
* **down**: no connection, no answer within ``PORTICO_MARKETPLACE_HEALTH_TIMEOUT_SECONDS``,
  any other status, or a JSON body whose ``status`` says it fails (``fail``, ``down``);
* **unknown**: not called, because the SSRF guard refuses the address (loopback, private,
  link-local ranges unless ``PORTICO_MARKETPLACE_EGRESS_ALLOW`` lists them).

The latency runs from the request's start (the name's resolution included) to the answer's
end.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

import httpx

from portico.core.egress import BodyTooLarge, EgressGuard, EgressRefused, guarded_get, read_bounded
from portico.marketplace.health.models import HealthStatus

_WORDS = {
    **dict.fromkeys(("pass", "ok", "up", "healthy", "green"), HealthStatus.UP),
    **dict.fromkeys(("warn", "degraded", "yellow"), HealthStatus.DEGRADED),
    **dict.fromkeys(("fail", "down", "unhealthy", "red", "error"), HealthStatus.DOWN),
}
#: a body larger than this is not read whole, nor looked into for a status word
_MAX_STATUS_BODY = 64 * 1024


@dataclass(frozen=True)
class Observation:
    status: HealthStatus
    http_status: int | None = None
    latency_ms: float | None = None
    detail: str | None = None


async def probe(
    client: httpx.AsyncClient, guard: EgressGuard, url: str, *, degraded_ms: float
) -> Observation:
    started = time.perf_counter()
    body: bytes | None
    try:
        response = await guarded_get(client, guard, url)
        try:
            body = await read_bounded(response, _MAX_STATUS_BODY)
        except BodyTooLarge:
            body = None  # answered; too long to look into for a status word
    except EgressRefused as refused:
        return Observation(HealthStatus.UNKNOWN, detail=f"not called: {refused}")
    except httpx.InvalidURL as invalid:
        return Observation(HealthStatus.UNKNOWN, detail=f"not called: not a valid URL: {invalid}")
    except httpx.TimeoutException:
        return Observation(HealthStatus.DOWN, detail="no answer in time")
    except httpx.HTTPError as error:
        return Observation(HealthStatus.DOWN, detail=f"cannot connect: {_reason(error)}")
    latency = round((time.perf_counter() - started) * 1000, 1)
    code = response.status_code
    if not 200 <= code < 300:
        return Observation(HealthStatus.DOWN, code, latency, f"answered {code}")
    said = _status_word(body)
    if said is HealthStatus.DOWN or said is HealthStatus.DEGRADED:
        return Observation(said, code, latency, f"its body says it is {said.value}")
    if latency > degraded_ms:
        return Observation(
            HealthStatus.DEGRADED, code, latency, f"answered slower than {degraded_ms:g} ms"
        )
    return Observation(HealthStatus.UP, code, latency)


def _status_word(body: bytes | None) -> HealthStatus | None:
    if not body:
        return None
    try:
        parsed = json.loads(body)
    except ValueError:
        return None
    word = parsed.get("status") if isinstance(parsed, dict) else None
    return _WORDS.get(word.strip().lower()) if isinstance(word, str) else None


def _reason(error: httpx.HTTPError) -> str:
    return (str(error) or type(error).__name__)[:300]
