"""What a route's upstream makes of a request: the node pick's context, how it is forwarded
(``Forwarding``, for either path of the proxy), and what its outcome tells the balancer and the
passive health checks (``account``)."""

from __future__ import annotations

from typing import Final
from urllib.parse import parse_qs

from portico.gateway.balancing.nodes import Node, PickContext
from portico.gateway.context import DirectUpstream, RequestContext
from portico.gateway.environment_runtime import UpstreamRuntime
from portico.gateway.http.proxy import (
    Endpoint,
    Forwarding,
    LineRelay,
    OnResponse,
    ProxyResult,
    Target,
)
from portico.gateway.http.server import Responder

#: round robin, least connections and EWMA read nothing of the request
_NO_PICK_CONTEXT: Final = PickContext(client_ip="", headers={}, args={}, consumer=None, vars={})


def pick_context(ctx: RequestContext, upstream: UpstreamRuntime) -> PickContext:
    if not upstream.hashed:
        return _NO_PICK_CONTEXT
    # only a hash key reads headers, arguments and variables
    request = ctx.request
    return PickContext(
        client_ip=ctx.client_ip,
        headers=dict(request.headers),
        args={k: v[0] for k, v in parse_qs(request.query).items()},
        consumer=ctx.consumer.username if ctx.consumer else None,
        vars={"uri": ctx.path, "host": ctx.host, "remote_addr": ctx.client_ip},
    )


def forwarding_of(
    ctx: RequestContext, upstream: UpstreamRuntime, on_response: OnResponse | LineRelay | None
) -> Forwarding:
    """How the request is forwarded, whichever path takes it (the context is the subject a
    ``LineRelay`` is told)."""
    return Forwarding(
        ctx.upstream_path or ctx.path,
        upstream_host(ctx, upstream),
        extra_headers(ctx),
        upstream.timeouts,
        upstream.retries,
        upstream.tls,
        on_response,
        subject=ctx,
    )


def direct_forwarding(
    ctx: RequestContext, direct: DirectUpstream, on_response: OnResponse | LineRelay | None
) -> Forwarding:
    """How a request a plugin sends elsewhere (``ctx.direct``) is forwarded: no retries (one
    destination), the provider's name as Host and TLS server name, its connection pooled
    or not as the plugin says."""
    return Forwarding(
        direct.path,
        direct.host_header,
        extra_headers(ctx),
        direct.timeouts,
        0,
        direct.tls,
        on_response,
        direct.server_name if direct.tls else None,
        direct.keepalive,
        ctx,
    )


class OneTarget:
    """``forward``'s targets for a direct upstream: its address once, then none."""

    __slots__ = ("target",)

    def __init__(self, direct: DirectUpstream) -> None:
        self.target: Target | None = Target(direct.address, direct.port)

    def __call__(self) -> Endpoint | None:
        target, self.target = self.target, None
        return target


def extra_headers(ctx: RequestContext) -> list[tuple[str, str]]:
    """The headers the plugins add for the upstream (and the request id, and the trace
    context: trace-export's ``traceparent`` wins over one another plugin set, since its span
    ids must be those the upstream got); those they remove are taken out of the
    request's."""
    request = ctx.request
    removed = ctx._remove_upstream_headers
    if removed:
        request.headers = [(k, v) for k, v in request.headers if k not in removed]
    extra = [(ctx.request_id_header, ctx.request_id)]
    traceparent = ctx.traceparent
    if traceparent is not None:  # (trace-export's: see RequestContext.traceparent)
        extra.append(("traceparent", traceparent))
    added = ctx._upstream_headers
    if added:
        for name, value in added.items():  # (appended: no second list to concatenate)
            if name != "host" and (traceparent is None or name != "traceparent"):
                extra.append((name, value))
    return extra


def upstream_host(ctx: RequestContext, upstream: UpstreamRuntime) -> str:
    if ctx._upstream_headers and "host" in ctx._upstream_headers:
        return ctx._upstream_headers["host"]
    if upstream.fixed_host is not None:
        return upstream.fixed_host
    return ctx.request.host or ctx.host


def account(
    upstream: UpstreamRuntime,
    tried: list[Node],
    ctx: RequestContext,
    responder: Responder,
    result: ProxyResult,
    elapsed: float,
) -> None:
    """The outcome on the context, and the nodes' part in it for the balancer and the
    passive health checks."""
    note_result(ctx, responder, result)
    for failed in tried[:-1]:  # earlier tries failed to connect (the only retried failure)
        upstream.balancer.finished(failed, 0.0, False)
        upstream.health.report(failed, tcp_failure=True)
    if tried:
        node = tried[-1]
        kind = result.error_kind
        if kind in ("client", "no_node"):  # not the node's doing: no verdict on it
            upstream.balancer.finished(node, elapsed, True)
        else:
            upstream.balancer.finished(node, elapsed, kind is None and result.status < 500)
            upstream.health.report(
                node,
                status=result.status if kind is None else None,
                tcp_failure=kind in ("connect", "reset"),
                timeout=kind == "timeout",
            )


def note_result(ctx: RequestContext, responder: Responder, result: ProxyResult) -> None:
    """The outcome of a forwarded request on the context, for the log phase."""
    ctx.status = responder.status or result.status  # what the client got (0: nothing sent)
    ctx.proxied = result.error_kind is None
    ctx.upstream_seconds = result.upstream_seconds
    ctx.upstream_addr = result.upstream_addr
    ctx.request_bytes = result.request_bytes
    ctx.response_bytes = result.response_bytes
