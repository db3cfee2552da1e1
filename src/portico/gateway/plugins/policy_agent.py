"""policy-agent: ask an Open Policy Agent whether to admit the request.

POSTs ``{"input": {request, route, consumer}}`` (plus the body with ``with_body``) to
``host`` + ``/v1/data/<policy>``; ``result.allow`` decides; an agent that cannot decide
refuses (503: fail closed).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import re
import ssl
from typing import Any
from urllib.parse import parse_qs, urlsplit

from pydantic import Field, field_validator

from portico.gateway.context import BasePluginRuntime, Reply, RequestContext
from portico.gateway.egress import EgressRefused
from portico.gateway.http.errors import ClientError, UpstreamError
from portico.gateway.http.upstream import UpstreamPool, UpstreamResponse
from portico.gateway.http.upstream_contract import Timeouts
from portico.gateway.plugin_services import RuntimeServices
from portico.gateway.plugins.base import HEADER_NAME, Category, HttpUrl, PluginConfig, PluginSpec
from portico.gateway.snapshot import SnapshotConsumer

# Rego package path segments joined by "/": no dots, so never ".." in the URL path
_POLICY = r"^[A-Za-z0-9_-]+(/[A-Za-z0-9_-]+)*$"
_POLICY_RE = re.compile(_POLICY)


class PolicyAgentConfig(PluginConfig):
    host: HttpUrl = Field(description="Base URL of the policy agent, e.g. http://opa:8181.")
    policy: str = Field(
        min_length=1,
        max_length=256,
        description='Policy path under /v1/data/, e.g. "example1" or "a/b".',
        json_schema_extra={"pattern": _POLICY},
    )
    with_body: bool = Field(False, description="Send the request body in the input too.")
    timeout: int = Field(
        3000, ge=1, le=60_000, description="Milliseconds to wait for the decision."
    )
    ssl_verify: bool = Field(True, description="Verify the agent's TLS certificate.")

    @field_validator("policy")
    @classmethod
    def _policy_path(cls, policy: str) -> str:
        if not _POLICY_RE.match(policy):
            raise ValueError(
                f'policy "{policy}" must be a path of names (letters, digits, "_", "-") '
                'joined by "/", e.g. "example1" or "a/b"'
            )
        return policy


PLUGIN = PluginSpec(
    name="policy-agent",
    category=Category.SECURITY,
    order=160,
    reorderable=True,
    config=PolicyAgentConfig,
    description="Asks an Open Policy Agent at `host` for /v1/data/<policy> with the request, "
    "route and consumer as input; `result.allow` admits, anything else → 403; no decision → "
    "503.",
)


#: the decision's size at most: a policy answers with a few fields
MAX_DECISION_BYTES = 64 * 1024
#: how long an address the SSRF guard permitted for the agent's name is used before the name
#: is resolved (and checked) again
RESOLVED_SECONDS = 10.0
#: the request body sent with ``with_body`` at most (bigger: 413, the policy cannot judge it)
MAX_INPUT_BODY = 1024 * 1024
#: headers a decision may not set upstream: framing and routing stay the gateway's
_RESERVED = frozenset(
    {"host", "content-length", "transfer-encoding", "connection", "upgrade", "te", "trailer"}
)
_HEADER_NAME = re.compile(HEADER_NAME)
_HEADER_VALUE = re.compile(r"[^\x00-\x08\x0a-\x1f\x7f]{0,8192}")
#: the 503 when the agent cannot decide: the request is refused (fail closed)
_UNAVAILABLE = "Policy agent unavailable"

logger = logging.getLogger("portico.gateway.plugins.policy_agent")


class AgentUnavailable(Exception):
    """The agent gave no usable decision (unreachable, timeout, non-200, not JSON)."""


class _AgentPool:
    """Keep-alive connections to policy agents: the data plane's own HTTP/1.1 client (the one
    that proxies to upstreams), shared by the attachments that verify certificates alike. A
    decision sits in every request's path, and httpx costs ~1 ms of CPU a request once tens
    are in flight (its pool scans every connection for every request)."""

    def __init__(self, verify: bool) -> None:
        context = ssl.create_default_context()
        if not verify:  # the operator's choice (ssl_verify: false), e.g. a self-signed agent
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        self.pool = UpstreamPool(ssl_context=context, max_idle_per_host=256)

    async def aclose(self) -> None:
        await self.pool.close()


class PolicyAgentRuntime(BasePluginRuntime):
    """POSTs the request's input to ``host`` + ``/v1/data/<policy>`` (OPA's data API), to
    the address the SSRF guard permitted, on a kept-alive connection, and obeys ``result``:
    ``allow: true`` passes, with ``result.headers`` added to the upstream request; anything
    else is refused with ``result.status_code`` (a 4xx or 5xx, default 403),
    ``result.reason`` as the message and ``result.headers`` on the response, as APISIX's opa
    plugin does. An agent that cannot decide gives 503."""

    def __init__(self, config: PolicyAgentConfig, services: RuntimeServices) -> None:
        parts = urlsplit(config.host)  # validated: http(s), a host, a port in range
        assert parts.hostname is not None
        self.url = f"{config.host.rstrip('/')}/v1/data/{config.policy}"
        self.hostname = parts.hostname
        self.tls = parts.scheme == "https"
        self.port = parts.port or (443 if self.tls else 80)
        default_port = self.port == (443 if self.tls else 80)
        authority = parts.netloc if not default_port else parts.netloc.rsplit(":", 1)[0]
        target = f"{parts.path.rstrip('/')}/v1/data/{config.policy}"
        self.head = (
            f"POST {target} HTTP/1.1\r\nhost: {authority}\r\n"
            "content-type: application/json\r\naccept: application/json\r\n"
        )
        self.with_body = config.with_body
        self.timeout = config.timeout / 1000
        self.timeouts = Timeouts(self.timeout, self.timeout, self.timeout)
        self.egress = services.egress
        self.now = services.now
        verify = config.ssl_verify
        key = "verify" if verify else "no-verify"
        self.pool = services.shared("policy-agent-pool", key, lambda: _AgentPool(verify)).pool
        #: the agent's address as the SSRF guard last permitted it, and until when (epoch
        #: seconds): a checked address may be reused, a name is not resolved per request
        self._address: tuple[str, float] | None = None

    async def access(self, ctx: RequestContext) -> Reply | None:
        body: bytes | None = None
        if self.with_body:
            length = ctx.request.content_length
            if length is not None and length > MAX_INPUT_BODY:
                return Reply.error(413, "Request body too large for the policy")
            try:
                body = await ctx.request.body.read() if length != 0 else b""
            except ClientError as error:  # fail closed: no request the policy did not see
                return Reply.error(error.status, "Invalid request body")
            if len(body) > MAX_INPUT_BODY:
                return Reply.error(413, "Request body too large for the policy")
        try:
            result = await self._decide(policy_input(ctx, body, self.now()))
        except AgentUnavailable as error:
            logger.warning("policy-agent: %s: %s", self.url, error)
            return Reply.error(503, _UNAVAILABLE)
        headers = _headers(result.get("headers"))
        if result.get("allow") is True:
            if headers:
                ctx.upstream_headers.update(headers)
            return None
        status = result.get("status_code")
        if not (isinstance(status, int) and not isinstance(status, bool) and 400 <= status < 600):
            status = 403
        reason = result.get("reason")
        if reason is None:
            message = "The request is not allowed by the policy"
        else:
            message = reason if isinstance(reason, str) else json.dumps(reason)
        return Reply.error(status, message, list(headers.items()))

    async def _decide(self, payload: dict[str, Any]) -> dict[str, Any]:
        """``result`` of the agent's answer ({} when the policy is undefined for the input)."""
        content = json.dumps({"input": payload}, separators=(",", ":"), default=str).encode()
        head = f"{self.head}content-length: {len(content)}\r\n\r\n".encode("latin-1")
        try:
            address = await self._resolve()
            async with asyncio.timeout(self.timeout):  # the whole exchange, as configured
                response = await self.pool.request(
                    address,
                    self.port,
                    "POST",
                    head,
                    content,
                    len(content),
                    self.timeouts,
                    tls=self.tls,
                    server_hostname=self.hostname,
                )
                raw = await _read_bounded(response, MAX_DECISION_BYTES)
        except EgressRefused as error:
            raise AgentUnavailable(f"refused by the egress guard: {error}") from None
        except TimeoutError:
            raise AgentUnavailable(f"no decision within {self.timeout:g} s") from None
        except (UpstreamError, ssl.SSLError, OSError) as error:
            raise AgentUnavailable(f"{type(error).__name__}: {error}") from None
        if response.status != 200:
            raise AgentUnavailable(f"answered {response.status}")
        try:
            answer = json.loads(raw)
        except ValueError:
            raise AgentUnavailable("answered with something that is not JSON") from None
        if not isinstance(answer, dict):
            raise AgentUnavailable("answered with JSON that is not an object")
        result = answer.get("result", {})
        return result if isinstance(result, dict) else {}

    async def _resolve(self) -> str:
        now = self.now()
        known = self._address
        if known is not None and known[1] > now:
            return known[0]
        address = await self.egress.resolve(self.hostname, self.port)
        self._address = (address, now + RESOLVED_SECONDS)
        return address


async def _read_bounded(response: UpstreamResponse, limit: int) -> bytes:
    """The answer's body, or :class:`AgentUnavailable` past ``limit`` bytes."""
    if response.complete is not None:
        data = response.complete
    else:
        chunks, size = [], 0
        async for chunk in response.body:
            size += len(chunk)
            if size > limit:
                response.close()
                break
            chunks.append(chunk)
        data = b"".join(chunks)
    if len(data) > limit:
        raise AgentUnavailable(f"answered with more than {limit} bytes")
    return data


def policy_input(ctx: RequestContext, body: bytes | None, now: float) -> dict[str, Any]:
    """OPA's ``input`` as APISIX's opa plugin builds it: the request (every header: the policy
    may need the credentials), the client, the route and the consumer (never its
    credentials)."""
    request = ctx.request
    headers: dict[str, str] = {}
    for name, value in request.headers:
        known = headers.get(name)
        headers[name] = value if known is None else f"{known}, {value}"
    described: dict[str, Any] = {
        "scheme": request.scheme,
        "method": request.method,
        "host": ctx.host,
        "path": ctx.path,
        "headers": headers,
        "query": {
            name: values[0] if len(values) == 1 else values
            for name, values in parse_qs(request.query, keep_blank_values=True).items()
        },
    }
    if body is not None:
        described["body"] = body.decode(errors="replace")
    route = ctx.route
    consumer = ctx.consumer
    return {
        "type": "http",
        "request": described,
        "var": {
            "remote_addr": ctx.client_ip,
            "remote_port": request.client_port,
            "request_id": ctx.request_id,
            "timestamp": int(now),
        },
        "route": {
            "id": route.id,
            "name": route.name,
            "uri": route.uri,
            "methods": route.methods,
            "hosts": route.hosts,
            "api_id": route.api_id,
            "api_name": route.api_name,
            "revision": route.revision_number,
        },
        "consumer": _consumer(consumer) if consumer is not None else None,
    }


def _consumer(consumer: SnapshotConsumer) -> dict[str, Any]:
    described: dict[str, Any] = {"id": consumer.id, "username": consumer.username}
    if consumer.app is not None:
        described["app"] = {"id": consumer.app.id, "name": consumer.app.name}
    return described


def _headers(found: object) -> dict[str, str]:
    """The decision's ``headers`` that may be set: string values, RFC 9110 names, no control
    characters (no response splitting), none of the framing headers."""
    if not isinstance(found, dict):
        return {}
    kept: dict[str, str] = {}
    for name, value in found.items():
        if not isinstance(name, str) or not _HEADER_NAME.match(name):
            continue
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str) or not _HEADER_VALUE.fullmatch(value):
            continue
        if name.lower() not in _RESERVED:
            kept[name.lower()] = value
    return kept


PLUGIN = dataclasses.replace(PLUGIN, runtime=PolicyAgentRuntime)
