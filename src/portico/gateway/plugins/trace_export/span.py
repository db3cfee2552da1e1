"""One request as a SERVER span: what the log phase keeps of it.

The log phase only gathers strings and numbers (:class:`SpanRecord`); the protobuf bytes are
written by ``wire.encode``, in the batch processor's task, once per batch. Attribute names
are OpenTelemetry's HTTP semantic conventions (stable since semconv 1.23): ``http.request.
method``, ``url.path``, ``url.scheme``, ``http.route``, ``http.response.status_code``,
``server.address``, ``server.port``, ``client.address``, ``user_agent.original``,
``network.protocol.version``; a 5xx answer sets the span's status to error (for a SERVER
span 4xx is the client's fault, not the span's).
"""

from __future__ import annotations

#: the instrumentation scope of the gateway's spans
SCOPE = "portico.gateway"
#: methods semconv names as they are; any other is reported as "_OTHER" (its value bounded)
KNOWN_METHODS = frozenset(
    {"CONNECT", "DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT", "TRACE"}
)

Attribute = tuple[str, str | int]


class SpanRecord:
    """What the log phase keeps of a request: plain values in slots (one per sampled
    request; the attribute list is made at encoding, off the request path)."""

    __slots__ = (
        "agent",
        "client",
        "end_ns",
        "extra",
        "host",
        "method",
        "parent_span_id",
        "path",
        "route",
        "scheme",
        "span_id",
        "start_ns",
        "status",
        "trace_id",
        "trace_state",
        "version",
    )

    def __init__(
        self,
        trace_id: int,
        span_id: int,
        parent_span_id: int,
        trace_state: str,
        start_ns: int,
        end_ns: int,
        method: str,
        path: str,
        scheme: str,
        route: str,
        host: str,
        client: str,
        version: str,
        status: int,
        agent: str | None,
        extra: list[Attribute] | None = None,
    ) -> None:
        self.trace_id = trace_id
        self.span_id = span_id
        self.parent_span_id = parent_span_id  # 0: a root span
        self.trace_state = trace_state
        self.start_ns = start_ns
        self.end_ns = end_ns
        self.method = method
        self.path = path
        self.scheme = scheme
        self.route = route
        self.host = host
        self.client = client
        self.version = version
        self.status = status  # 0: no answer was sent
        self.agent = agent
        self.extra = extra  # additional_attributes: (variable name, value)

    @property
    def name(self) -> str:
        """``{method} {http.route}``; an unknown method is named ``HTTP``."""
        method = self.method if self.method in KNOWN_METHODS else "HTTP"
        return f"{method} {self.route}"

    @property
    def error(self) -> bool:
        return self.status >= 500

    def attributes(self) -> list[Attribute]:
        """In this order: those that repeat across a route's spans, then ``url.path``, then
        the additional ones (``wire`` encodes the first part once per distinct value)."""
        found = self.common_attributes()
        found.append(("url.path", self.path))
        if self.extra:
            found += self.extra
        return found

    def common_attributes(self) -> list[Attribute]:
        method = self.method
        known = method in KNOWN_METHODS
        found: list[Attribute] = [
            ("http.request.method", method if known else "_OTHER"),
            ("url.scheme", self.scheme),
            ("http.route", self.route),
            ("server.address", self.host),
            ("client.address", self.client),
            ("network.protocol.version", self.version),
        ]
        if self.status:
            found.append(("http.response.status_code", self.status))
        if self.agent is not None:
            found.append(("user_agent.original", self.agent))
        if not known:
            found.append(("http.request.method_original", method))
        return found
