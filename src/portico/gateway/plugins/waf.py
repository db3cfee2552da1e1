"""waf: ask a WAF service at ``host:port`` for a verdict on each request (block → 403).

Per request, in the access phase: ``POST http://host:port/inspect`` with
``{method, uri, headers, client_ip, body}`` (``uri`` is the path with its query, as
received; ``headers`` a list of ``[name, value]`` pairs; ``body`` the request body when it is
at most ``max_body_size`` (64 KiB by default) — text, or base64 with ``"body_encoding":
"base64"`` when it is not UTF-8). A larger body is refused with 413 before the engine is
asked (``oversized_body: "reject"``, the default: rules that never see a body cannot judge
it), or, with ``"pass"``, the engine gets the head alone and ``body_skipped``. The answer
``{"action": "block", "rule_id": ...}`` refuses the request with 403; the client is not told
which rule (the engine logs it; the log phase finds it in ``ctx.vars["waf_rule_id"]``).
``{"action": "pass"}`` lets it through. An engine that is down, late (``timeout`` ms), or
answers anything else is a failure: ``fail_open`` passes the request, otherwise 503.

The call goes through a small pool of keep-alive connections per engine address
(:data:`ENGINE_CONNECTIONS`, shared by every route and snapshot that asks that engine: its
work is CPU-bound, so more connections would only queue inside it) and through the SSRF
guard: ``host`` is user input. ``portico waf-engine`` (``portico.waf``) is such an engine:
ModSecurity v3 with the OWASP Core Rule Set.
"""

from __future__ import annotations

import base64
import dataclasses
import ipaddress
import json
import logging
import re
from typing import Any, Literal

import httpx
from pydantic import Field, field_validator

from portico.core.egress import BodyTooLarge, read_bounded
from portico.gateway.context import BasePluginRuntime, Reply, RequestContext
from portico.gateway.egress import EgressRefused
from portico.gateway.http.errors import ClientError
from portico.gateway.outbound import guarded_request
from portico.gateway.plugin_services import RuntimeServices
from portico.gateway.plugins.base import Category, PluginConfig, PluginSpec

_LABEL = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)")


def host_error(host: str) -> str | None:
    """Why ``host`` is neither an IP address nor an RFC 1123 hostname, or None."""
    try:
        ipaddress.ip_address(host)
        return None
    except ValueError:
        pass
    labels = host.removesuffix(".").split(".")
    # an all-digit last label is a mistyped address (1.2.3.999), not a name
    names_ok = len(host) <= 253 and all(_LABEL.fullmatch(label) for label in labels)
    if names_ok and not labels[-1].isdigit():
        return None
    return f'host "{host}" is not a hostname or an IP address'


#: the largest request body sent for inspection, unless configured (``max_body_size``)
MAX_INSPECTED_BODY = 64 * 1024


class WafConfig(PluginConfig):
    host: str = Field(
        min_length=1, max_length=253, description="Hostname or IP address of the WAF service."
    )
    port: int = Field(ge=1, le=65535, description="Port of the WAF service.")
    timeout: int = Field(
        1000, ge=1, le=60_000, description="Milliseconds to wait for the WAF's verdict."
    )
    fail_open: bool = Field(
        False,
        description="When the WAF is unreachable or late: pass the request (true) or refuse "
        "it (false, the safe default).",
    )
    max_body_size: int = Field(
        MAX_INSPECTED_BODY,
        ge=1024,
        le=16 * 1024 * 1024,
        description="Bytes of a request body the engine inspects (ModSecurity's "
        "SecRequestBodyNoFilesLimit plays this part on an nginx).",
    )
    oversized_body: Literal["reject", "pass"] = Field(
        "reject",
        description='A request body larger than max_body_size: "reject" answers 413 (the '
        "safe default: a body the rules never saw would carry past them whatever it holds), "
        '"pass" sends the engine the head alone (body_skipped).',
    )

    @field_validator("host")
    @classmethod
    def _host(cls, host: str) -> str:
        reason = host_error(host)
        if reason is not None:
            raise ValueError(reason)
        return host


PLUGIN = PluginSpec(
    name="waf",
    category=Category.SECURITY,
    order=50,
    reorderable=False,
    config=WafConfig,
    description="Forwards request metadata to a WAF service at `host:port`; its verdict "
    "blocks (403) or passes the request.",
)

#: the largest verdict read from the engine
MAX_VERDICT_BYTES = 16 * 1024
#: connections kept to one engine; requests beyond wait for one (within ``timeout``)
ENGINE_CONNECTIONS = 16
#: where the blocking rule's id is kept for the log phase
RULE_ID_VAR = "waf_rule_id"

logger = logging.getLogger("portico.gateway.waf")


class EngineFailed(Exception):
    """The engine gave no usable verdict (down, late, refused, a malformed answer)."""


class _EnginePool:
    """The keep-alive connections to one engine (a shared resource: it outlives snapshots)."""

    def __init__(self) -> None:
        limits = httpx.Limits(
            max_connections=ENGINE_CONNECTIONS, max_keepalive_connections=ENGINE_CONNECTIONS
        )
        self.client = httpx.AsyncClient(limits=limits, trust_env=False)

    async def aclose(self) -> None:
        await self.client.aclose()


class WafRuntime(BasePluginRuntime):
    def __init__(self, config: WafConfig, services: RuntimeServices) -> None:
        self.config = config
        self.client = services.shared(
            "waf-engine", f"{config.host}:{config.port}", _EnginePool
        ).client
        self.guard = services.egress
        host = f"[{config.host}]" if ":" in config.host else config.host
        self.url = f"http://{host}:{config.port}/inspect"
        self.timeout = config.timeout / 1000

    async def access(self, ctx: RequestContext) -> Reply | None:
        try:
            document = await _inspection(ctx, self.config.max_body_size)
        except ClientError:  # the proxy meets the same error and answers it
            return None
        if document.get("body_skipped") and self.config.oversized_body == "reject":
            return Reply.error(413, "Request body larger than the WAF inspects")
        try:
            verdict = await self._ask(document)
        except EngineFailed as error:
            logger.warning("waf engine at %s:%d: %s", self.config.host, self.config.port, error)
            if self.config.fail_open:
                return None
            return Reply.error(503, "WAF engine unavailable")
        if verdict.get("action") == "block":
            rule_id = verdict.get("rule_id")
            ctx.vars[RULE_ID_VAR] = str(rule_id) if rule_id is not None else None
            return Reply.error(403, "Forbidden")
        return None

    async def _ask(self, document: dict[str, Any]) -> dict[str, Any]:
        body = json.dumps(document, separators=(",", ":")).encode()
        try:
            response = await guarded_request(
                self.client,
                self.guard,
                "POST",
                self.url,
                content=body,
                headers={"content-type": "application/json"},
                timeout=self.timeout,
                stream=True,
            )
            if response.status_code != 200:
                await response.aclose()
                raise EngineFailed(f"answered {response.status_code}")
            raw = await read_bounded(response, MAX_VERDICT_BYTES)
        except EgressRefused as error:
            raise EngineFailed(f"refused by the egress guard: {error}") from None
        except httpx.TimeoutException:
            raise EngineFailed("no verdict in time") from None
        except (httpx.HTTPError, BodyTooLarge) as error:
            raise EngineFailed(type(error).__name__) from None
        try:
            verdict = json.loads(raw)
        except ValueError:
            raise EngineFailed("the verdict is not JSON") from None
        if not isinstance(verdict, dict) or verdict.get("action") not in ("pass", "block"):
            raise EngineFailed("the verdict is neither pass nor block")
        return verdict


async def _inspection(ctx: RequestContext, limit: int) -> dict[str, Any]:
    """What the engine is asked about: the request as received, its body if at most
    ``limit`` bytes (a chunked one is read, within the gateway's body limit, to know)."""
    request = ctx.request
    document: dict[str, Any] = {
        "method": request.method,
        "uri": request.path + ("?" + request.query if request.query else ""),
        "headers": request.headers,
        "client_ip": ctx.client_ip,
        "body": "",
    }
    length = request.content_length
    if length is not None and length > limit:
        document["body_skipped"] = True
        return document
    if not length and not request.body.chunked:
        return document
    body = await request.body.read()  # kept for the proxy
    if len(body) > limit:
        document["body_skipped"] = True
        return document
    try:
        document["body"] = body.decode()
    except UnicodeDecodeError:
        document["body"] = base64.b64encode(body).decode()
        document["body_encoding"] = "base64"
    return document


PLUGIN = dataclasses.replace(PLUGIN, runtime=WafRuntime)
