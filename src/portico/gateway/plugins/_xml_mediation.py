"""What xml-to-json and json-to-xml do to a request and to an answer, compiled with the data
plane (``portico.native``); the mapping itself is ``_xml_mapping``.

Both plugins are one runtime in two directions. A plugin converts:

* the request body, when ``transform_request`` is on and the request's content type is one
  of ``request_content_types``: read whole (at most ``max_body_size``: a longer one is a
  413 before more is read), converted, and forwarded with its new type and length;
* the answer, when ``transform_response`` is on, the client's ``Accept`` prefers the
  plugin's target type to the answer's own, and the answer's content type is one of
  ``content_types`` (identity-encoded: the upstream is asked for no other encoding). Its
  header filter drops the headers that describe the old body (length, ETag) and adds
  ``Vary: Accept``; its body filter holds the body back (at most ``max_body_size``) and
  releases the converted one at the end. A body it cannot convert (malformed, too long, a
  SOAP fault) replaces the whole answer by a 502 problem (``http.errors.AnswerReplaced``:
  nothing of the node's answer has left yet).

Errors are ``application/problem+json`` documents whose ``type`` is
``urn:portico:gateway:<kind>``.
"""

from __future__ import annotations

from typing import Final, Protocol

from portico.gateway.context import Access, BasePluginRuntime, Reply, RequestContext
from portico.gateway.context import ResponseHeaders as Headers
from portico.gateway.http.body import RequestBody
from portico.gateway.http.errors import AnswerReplaced, ClientError
from portico.gateway.plugins._json_xml import json_to_xml as json_text_to_xml
from portico.gateway.plugins._xml_json import xml_to_json
from portico.gateway.plugins._xml_mapping import (
    CAMEL,
    PASCAL,
    SOAP11_NS,
    UNCHANGED,
    MalformedXml,
    NotRepresentable,
    SoapFault,
    json_text,
    parse_json,
    soap_envelope,
)

#: the two directions
XML_TO_JSON: Final = 0
JSON_TO_XML: Final = 1

SOAP11_TYPE: Final = "text/xml; charset=utf-8"
SOAP12_TYPE: Final = "application/soap+xml"
_JSON_TYPE: Final = "application/json"
_PROBLEM_TYPE: Final = "application/problem+json"
#: C when the gateway's build is current (``_xml_json``: no Python object per element)
_xml_to_json: Final = xml_to_json
#: C when the gateway's build is current (``_json_xml``: orjson's objects written in C)
_json_to_xml: Final = json_text_to_xml
_SOAP11: Final = SOAP11_NS
#: the headers describing the node's body, which the converted one replaces: its type is set
#: again, the others go
_OLD_BODY_HEADERS: Final = frozenset(
    {"content-length", "etag", "content-md5", "content-encoding", "content-type"}
)
#: Accept headers seen, with what they decide, per runtime (bounded: clients send few kinds)
_MEMO_SIZE: Final = 256


def style_of(naming: str) -> int:
    """The mapping's constant for a ``property_naming`` value."""
    if naming == "camelCase":
        return CAMEL
    if naming == "PascalCase":
        return PASCAL
    return UNCHANGED


def media_type(value: str | None) -> str:
    """The media type of a Content-Type value, lower-cased, without its parameters."""
    if not value:
        return ""
    return value.partition(";")[0].strip().lower()


def problem(
    status: int, kind: str, title: str, detail: str, extra: dict[str, object] | None = None
) -> tuple[list[tuple[str, str]], bytes]:
    """An RFC 9457 problem document: its headers and body."""
    document: dict[str, object] = {
        "type": "urn:portico:gateway:" + kind,
        "title": title,
        "status": status,
        "detail": detail,
    }
    if extra:
        document.update(extra)
    return [("content-type", _PROBLEM_TYPE)], json_text(document)  # (a deep fault detail)


def problem_reply(status: int, kind: str, title: str, detail: str) -> Reply:
    headers, body = problem(status, kind, title, detail)
    return Reply(status, body, headers)


def replaced(kind: str, title: str, detail: str, extra: dict[str, object] | None = None) -> None:
    """Replace the node's answer by a 502 problem (see the module docstring)."""
    headers, body = problem(502, kind, title, detail, extra)
    raise AnswerReplaced(502, headers, body, f"{kind}: {detail}")


def _quality(ranges: list[tuple[str, float]], media: str) -> float:
    """The quality ``ranges`` (an Accept header's) give ``media``: that of the most specific
    range that matches it (``type/subtype``, then ``type/*``, then ``*/*``), 0 if none."""
    kind = media.partition("/")[0] + "/*"
    best = -1.0
    specificity = -1
    for name, q in ranges:
        if name == media:
            rank = 2
        elif name == kind:
            rank = 1
        elif name == "*/*":
            rank = 0
        else:
            continue
        if rank > specificity:
            specificity = rank
            best = q
    return max(best, 0.0)


def accept_ranges(accept: str) -> list[tuple[str, float]]:
    """An Accept header's media ranges with their qualities (an unreadable ``q`` is 0)."""
    out: list[tuple[str, float]] = []
    for part in accept.split(","):
        name, _, parameters = part.partition(";")
        name = name.strip().lower()
        if not name:
            continue
        q = 1.0
        for parameter in parameters.split(";"):
            key, _, value = parameter.partition("=")
            if key.strip().lower() == "q":
                try:
                    q = float(value.strip())
                except ValueError:
                    q = 0.0
                if not 0.0 <= q <= 1.0:
                    q = 0.0
        out.append((name, q))
    return out


class MediationSettings(Protocol):
    """What :class:`Mediation` reads of either plugin's configuration (``JsonToXmlConfig``,
    ``XmlToJsonConfig``), once, when the route's chain is built."""

    @property
    def transform_request(self) -> bool: ...

    @property
    def request_content_types(self) -> list[str]: ...

    @property
    def transform_response(self) -> bool: ...

    @property
    def content_types(self) -> list[str]: ...

    @property
    def property_naming(self) -> str: ...

    @property
    def array_item_name(self) -> str: ...

    @property
    def root_element_name(self) -> str: ...

    @property
    def max_body_size(self) -> int: ...


class Mediation(BasePluginRuntime):
    """One attachment of xml-to-json (``XML_TO_JSON``) or json-to-xml (``JSON_TO_XML``),
    its settings read once (see the module docstring)."""

    def __init__(
        self,
        direction: int,
        settings: MediationSettings,
        soap_namespace: str,
        soap_action: str | None,
    ) -> None:
        self.direction = direction
        self.transform_request = settings.transform_request
        self.request_types = frozenset(media_type(t) for t in settings.request_content_types)
        self.transform_response = settings.transform_response
        types = [media_type(t) for t in settings.content_types]
        if soap_namespace and direction == XML_TO_JSON:  # the envelope's own type too
            envelope = "text/xml" if soap_namespace == _SOAP11 else SOAP12_TYPE
            if envelope not in types:
                types.append(envelope)
        self.answer_types = frozenset(types)
        #: the types the client may prefer to the answer's: the plugin's targets
        self.targets: tuple[str, ...] = (
            (_JSON_TYPE,) if direction == XML_TO_JSON else ("application/xml", "text/xml")
        )
        self.others: tuple[str, ...] = tuple(sorted(self.answer_types))
        #: what the upstream is asked for when the answer is to be converted
        self.upstream_accept = ", ".join(types)
        self.style = style_of(settings.property_naming)
        self.item = settings.array_item_name
        self.root = settings.root_element_name
        self.limit = settings.max_body_size
        self.soap = soap_namespace
        self.soap_action = soap_action
        self.decisions: dict[str, str] = {}

    # -- negotiation ------------------------------------------------------------------

    def wanted(self, ctx: RequestContext) -> str:
        """The target type the client prefers to the answer's own types ("" if none)."""
        accept = ctx.header("accept")
        if not accept:
            return ""
        found = self.decisions.get(accept)
        if found is None:
            found = self._decide(accept)
            if len(self.decisions) < _MEMO_SIZE:
                self.decisions[accept] = found
        return found

    def _decide(self, accept: str) -> str:
        ranges = accept_ranges(accept)
        target = ""
        best = 0.0
        for media in self.targets:
            q = _quality(ranges, media)
            if q > best:
                target, best = media, q
        if not target:
            return ""
        for media in self.others:
            if _quality(ranges, media) >= best:
                return ""  # the answer as it is suits the client as well
        return target

    # -- the request ------------------------------------------------------------------

    def access(self, ctx: RequestContext) -> Access:
        if self.transform_response and self.wanted(ctx):
            # the answer is to be converted: asked for in a type the plugin reads, and
            # without a content coding it would have to undo
            ctx.upstream_headers["accept"] = self.upstream_accept
            ctx.remove_upstream_headers.add("accept-encoding")
        if not self.transform_request:
            return None
        request = ctx.request
        if media_type(request.header("content-type")) not in self.request_types:
            return None
        length = request.content_length
        if length is not None and length > self.limit:
            return self._too_large()
        if length == 0 or (length is None and not request.body.chunked):
            return None  # no body: nothing to convert
        data = request.body.peek_complete()
        if data is None:
            return self._access_later(ctx)
        return self._convert_request(ctx, data)

    async def _access_later(self, ctx: RequestContext) -> Reply | None:
        parts: list[bytes] = []
        size = 0
        try:
            async for chunk in ctx.request.body:
                size += len(chunk)
                if size > self.limit:  # no more is read: never buffered past the limit
                    return self._too_large()
                parts.append(chunk)
        except ClientError as error:
            return problem_reply(
                error.status, "request-body-invalid", "Bad Request", "cannot read the body"
            )
        return self._convert_request(ctx, b"".join(parts))

    def _too_large(self) -> Reply:
        detail = f"the request body is larger than max_body_size ({self.limit} bytes)"
        return problem_reply(413, "body-too-large", "Payload Too Large", detail)

    def _convert_request(self, ctx: RequestContext, data: bytes) -> Reply | None:
        if len(data) > self.limit:
            return self._too_large()
        if not data:
            return None
        try:
            if self.direction == XML_TO_JSON:
                converted, content_type = self._json_request(ctx, data)
            else:
                converted = _xml_to_json(data, UNCHANGED, "")
                content_type = _JSON_TYPE
        except (ValueError, NotRepresentable, MalformedXml) as error:
            return problem_reply(400, "request-body-invalid", "Bad Request", _reason(error))
        request = ctx.request
        request.body.discard()
        body = RequestBody(None, chunked=False, expect_continue=False)
        body.feed(converted)
        request.body = body
        request.content_length = len(converted)
        ctx.upstream_headers["content-type"] = content_type
        return None

    def _json_request(self, ctx: RequestContext, data: bytes) -> tuple[bytes, str]:
        if not self.soap:
            try:
                converted = _json_to_xml(data, UNCHANGED, self.item, self.root)
            except ValueError as error:  # (NotRepresentable is no ValueError)
                raise ValueError(f"the request body is not JSON: {error}") from None
            return converted, "application/xml"
        try:
            value = parse_json(data)
        except ValueError as error:
            raise ValueError(f"the request body is not JSON: {error}") from None
        converted = soap_envelope(value, self.soap, self.item, self.root)
        action = self.soap_action
        if self.soap == _SOAP11:
            ctx.upstream_headers["soapaction"] = '"' + (action or "") + '"'
            return converted, SOAP11_TYPE
        if action is None:
            return converted, SOAP12_TYPE + "; charset=utf-8"
        return converted, SOAP12_TYPE + '; charset=utf-8; action="' + action + '"'

    # -- the answer -------------------------------------------------------------------

    def header_filter(self, ctx: RequestContext, status: int, headers: Headers) -> None:
        if not self.transform_response or status < 200 or status == 204 or status == 304:
            return
        if media_type(headers.get("content-type")) not in self.answer_types:
            return
        vary = headers.get_all("vary")
        if not any("accept" in _tokens(line) or "*" in _tokens(line) for line in vary):
            headers.add("vary", "Accept")  # the body now depends on the Accept header
        target = self.wanted(ctx)
        if not target:
            return
        encoding = headers.get("content-encoding")
        if encoding and encoding.strip().lower() != "identity":
            return  # (asked for none: a node that encodes anyway is relayed as it answered)
        length = headers.get("content-length")
        headers.remove(_OLD_BODY_HEADERS)  # (one pass: a pop per name copies the list each)
        headers.add("content-type", target if target == _JSON_TYPE else target + "; charset=utf-8")
        if ctx.request.method == "HEAD":
            return
        # an answer that says it is too long is refused before any of it is held
        too_long = length is not None and length.isdigit() and int(length) > self.limit
        ctx.body_filters.append(Converting(self, too_long))

    def convert_answer(self, data: bytes) -> bytes:
        """The converted answer, or ``AnswerReplaced`` with the 502 problem."""
        try:
            if self.direction == XML_TO_JSON:
                return _xml_to_json(data, self.style, self.soap)
            return _json_to_xml(data, self.style, self.item, self.root)
        except SoapFault as fault:
            extra: dict[str, object] = {"faultCode": fault.code, "faultString": fault.text}
            if fault.detail is not None:
                extra["faultDetail"] = fault.detail
            detail = f"the SOAP service answered with a fault: {fault.code}: {fault.text}"
            replaced("soap-fault", "SOAP Fault", detail, extra)
        # (a name per except: see CONVENTIONS.md "Compiled modules")
        except MalformedXml as malformed:
            replaced("upstream-body-invalid", "Bad Gateway", f"the upstream answer: {malformed}")
        except ValueError as not_json:
            detail = f"the upstream answer is not JSON: {not_json}"
            replaced("upstream-body-invalid", "Bad Gateway", detail)
        except NotRepresentable as unwritable:
            detail = f"the upstream answer cannot be written as XML: {unwritable}"
            replaced("upstream-body-invalid", "Bad Gateway", detail)
        raise AssertionError("unreachable")  # (replaced always raises)

    def refuse_too_long(self) -> None:
        detail = f"the upstream answer is larger than max_body_size ({self.limit} bytes)"
        replaced("upstream-body-too-large", "Bad Gateway", detail)


def _tokens(line: str) -> list[str]:
    return [token.strip().lower() for token in line.split(",")]


def _reason(error: Exception) -> str:
    return str(error) or type(error).__name__


class Converting:
    """The body filter of one converted answer: holds the body back, at most the limit,
    and releases the converted body at the end."""

    __slots__ = ("mediation", "parts", "size", "too_long")

    def __init__(self, mediation: Mediation, too_long: bool) -> None:
        self.mediation = mediation
        self.parts: list[bytes] = []
        self.size = 0
        self.too_long = too_long

    def __call__(self, ctx: RequestContext, chunk: bytes, last: bool) -> bytes:
        if self.too_long:
            self.mediation.refuse_too_long()
        if chunk:
            self.size += len(chunk)
            if self.size > self.mediation.limit:
                self.mediation.refuse_too_long()
            self.parts.append(chunk)
        if not last:
            return b""
        parts = self.parts
        if not parts:
            return b""  # no body (a 201 that says nothing): nothing to convert
        data = parts[0] if len(parts) == 1 else b"".join(parts)
        self.parts = []
        return self.mediation.convert_answer(data)
