"""policy-agent: ask an Open Policy Agent whether to admit the request.

POSTs ``{"input": {request, route, consumer}}`` (plus the body with ``with_body``) to
``host`` + ``/v1/data/<policy>``; ``result.allow`` decides; an agent that cannot decide
refuses (503: fail closed).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import re
from typing import Any
from urllib.parse import parse_qs

import httpx
from pydantic import Field, field_validator

from portico.core.egress import BodyTooLarge, read_bounded
from portico.gateway.context import BasePluginRuntime, Reply, RequestContext
from portico.gateway.egress import EgressRefused
from portico.gateway.http.errors import ClientError
from portico.gateway.outbound import guarded_request
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


class _InsecureClient:
    """A pooled client that does not verify certificates (``ssl_verify: false``), shared by
    the attachments that ask for it."""

    def __init__(self) -> None:
        # the operator's choice (an agent with a self-signed certificate on its own network)
        self.client = httpx.AsyncClient(timeout=10.0, trust_env=False, verify=False)  # noqa: S501

    async def aclose(self) -> None:
        await self.client.aclose()


class PolicyAgentRuntime(BasePluginRuntime):
    """POSTs the request's input to ``host`` + ``/v1/data/<policy>`` (OPA's data API) through
    the SSRF guard and obeys ``result``: ``allow: true`` passes, with ``result.headers`` added
    to the upstream request; anything else is refused with ``result.status_code`` (a 4xx or
    5xx, default 403), ``result.reason`` as the message and ``result.headers`` on the
    response, as APISIX's opa plugin does. An agent that cannot decide gives 503."""

    def __init__(self, config: PolicyAgentConfig, services: RuntimeServices) -> None:
        self.url = f"{config.host.rstrip('/')}/v1/data/{config.policy}"
        self.with_body = config.with_body
        self.timeout = config.timeout / 1000
        self.egress = services.egress
        self.now = services.now
        self.client = (
            services.http()
            if config.ssl_verify
            else services.shared("http-client-insecure", "", _InsecureClient).client
        )

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
        content = json.dumps({"input": payload}, separators=(",", ":"), default=str)
        try:
            response = await guarded_request(
                self.client,
                self.egress,
                "POST",
                self.url,
                content=content.encode(),
                headers={"content-type": "application/json"},
                timeout=self.timeout,
                stream=True,
            )
            raw = await read_bounded(response, MAX_DECISION_BYTES)
        except EgressRefused as error:
            raise AgentUnavailable(f"refused by the egress guard: {error}") from None
        except (httpx.HTTPError, BodyTooLarge) as error:
            raise AgentUnavailable(f"{type(error).__name__}: {error}") from None
        if response.status_code != 200:
            raise AgentUnavailable(f"answered {response.status_code}")
        try:
            answer = json.loads(raw)
        except ValueError:
            raise AgentUnavailable("answered with something that is not JSON") from None
        if not isinstance(answer, dict):
            raise AgentUnavailable("answered with JSON that is not an object")
        result = answer.get("result", {})
        return result if isinstance(result, dict) else {}


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
