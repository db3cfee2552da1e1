"""The connector interface and the outbound HTTP every connector uses.

A connector is stateless: one instance serves every connection of its source type, and each
call receives the connection's configuration (secrets opened) and an :class:`Outbound`.
``check`` confirms the configuration reaches the remote side with working credentials, or
raises :class:`ConnectorError` with a message written for the administrator who typed it
(and the field at fault, when one is). It never includes a secret in that message.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import httpx

from portico.core.egress import EgressGuard, EgressRefused, guarded_get

#: what a connection field holds: a text, an absolute http(s) URL, or a list of those URLs
FieldType = Literal["string", "url", "url_list"]
CAPABILITIES = (
    "apis",
    "products",
    "remote_inventory",
    "async_import",
    "analytics",
    "subscription_provisioning",
    "health",
)
#: an absolute http(s) URL: a host name, an IPv4 or a bracketed IPv6 address, an optional
#: port, then a path, query or fragment on one line; no credentials (a secret goes in a field
#: of its own). What the pattern lets through and no server answers fails the check.
URL_PATTERN = (
    r"^https?://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?)"
    r"(:[0-9]{1,5})?([/?#].*)?$"
)
#: the longest text a field holds
MAX_TEXT = 2000
#: the most URLs a url_list field holds
MAX_URLS = 50
#: seconds to wait for a remote side (connect, read, write, pool) during a check
DEFAULT_TIMEOUT = 10.0
#: the largest document a check reads (an OpenAPI document, an answer of a remote API)
MAX_BODY_BYTES = 10 * 1024 * 1024


class ConnectorError(Exception):
    """The remote side cannot be used with this configuration; ``message`` says why, in
    words an administrator can act on, and ``field`` names the configuration field at fault
    when one is."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


@dataclass(frozen=True)
class ConnectionField:
    name: str
    label: str
    type: FieldType
    required: bool = True
    secret: bool = False
    help: str = ""


@dataclass(frozen=True)
class Outbound:
    """HTTP to user-supplied URLs: each destination, and each redirect, checked by the
    guard and pinned to the address checked; bounded in time and size."""

    guard: EgressGuard
    timeout: float = DEFAULT_TIMEOUT

    async def get(
        self, url: str, *, headers: Mapping[str, str] | None = None, config_field: str | None
    ) -> tuple[httpx.Response, bytes]:
        """The answer to ``GET url`` and its body (at most :data:`MAX_BODY_BYTES`); a refused
        destination, a failed connection or a timeout is a :class:`ConnectorError` on
        ``config_field``."""
        async with httpx.AsyncClient(timeout=self.timeout, trust_env=False) as client:
            try:
                response = await guarded_get(client, self.guard, url, headers=dict(headers or {}))
                body = await _read_bounded(response, url, config_field)
            except EgressRefused as error:
                raise ConnectorError(
                    f"{url} may not be reached: {error}", field=config_field
                ) from None
            except httpx.TimeoutException:
                raise ConnectorError(
                    f"{url} did not answer within {self.timeout:g} seconds", field=config_field
                ) from None
            except httpx.LocalProtocolError:
                # never its text: it may quote a header, credentials included
                raise ConnectorError(
                    f"cannot request {url}: the URL or a credential is not valid in HTTP",
                    field=config_field,
                ) from None
            except httpx.HTTPError as error:
                raise ConnectorError(
                    f"cannot connect to {url}: {_reason(error)}", field=config_field
                ) from None
            except (httpx.InvalidURL, ValueError):  # UnicodeError: a header not ASCII
                # the URL or a credential cannot travel in an HTTP request as written
                raise ConnectorError(
                    f"cannot request {url}: the URL or a credential is not valid in HTTP",
                    field=config_field,
                ) from None
        return response, body


async def _read_bounded(response: httpx.Response, url: str, config_field: str | None) -> bytes:
    chunks, size = [], 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            await response.aclose()
            raise ConnectorError(
                f"{url} answered more than {MAX_BODY_BYTES} bytes", field=config_field
            )
        chunks.append(chunk)
    return b"".join(chunks)


def _reason(error: httpx.HTTPError) -> str:
    return str(error) or type(error).__name__


class Connector(abc.ABC):
    """A source type. Subclasses set the class attributes and implement :meth:`check`."""

    id: ClassVar[str]
    label: ClassVar[str]
    description: ClassVar[str] = ""
    #: what the connector can do, every key of :data:`CAPABILITIES`
    capabilities: ClassVar[Mapping[str, bool]]
    connection_fields: ClassVar[tuple[ConnectionField, ...]]
    #: the feature flag that turns the source type on and off
    feature_flag: ClassVar[str]

    @property
    def secret_fields(self) -> frozenset[str]:
        return frozenset(f.name for f in self.connection_fields if f.secret)

    def config_schema(self) -> dict[str, Any]:
        """The JSON schema of a connection's ``config`` (what the service's check enforces)."""
        url = {"type": "string", "pattern": URL_PATTERN, "maxLength": MAX_TEXT}
        types: dict[str, dict[str, Any]] = {
            "string": {"type": "string", "minLength": 1, "maxLength": MAX_TEXT},
            "url": url,
            "url_list": {"type": "array", "items": url, "minItems": 1, "maxItems": MAX_URLS},
        }
        return {
            "type": "object",
            "properties": {
                f.name: {**types[f.type], "title": f.label, "description": f.help}
                | ({"writeOnly": True} if f.secret else {})
                for f in self.connection_fields
            },
            "required": [f.name for f in self.connection_fields if f.required],
            "additionalProperties": False,
        }

    @abc.abstractmethod
    async def check(self, config: Mapping[str, Any], outbound: Outbound) -> None:
        """Return when ``config`` (validated against :attr:`connection_fields`, secrets
        included) reaches the remote side with working credentials; raise
        :class:`ConnectorError` otherwise."""


def capabilities(**enabled: bool) -> Mapping[str, bool]:
    """The full capability map: every capability, false unless named true."""
    unknown = set(enabled) - set(CAPABILITIES)
    if unknown:
        raise ValueError(f"unknown capabilities {sorted(unknown)}")
    return {name: enabled.get(name, False) for name in CAPABILITIES}
