"""The connector interface and the outbound HTTP every connector uses.

A connector is stateless: one instance serves every connection of its source type, and each
call receives the connection's configuration (secrets opened) and an :class:`Outbound`.
Every method raises :class:`ConnectorError` with a message written for an administrator (and
the field at fault, when one is), never including a secret. What a connector implements:

* ``check``: the configuration reaches the remote side with working credentials;
* ``list_apis``: every API the remote side exposes, as :class:`RemoteApi` (cheap: no
  documents unless the source has nothing else to read);
* ``fetch_api``: one API with its OpenAPI document and revision (:class:`RemoteApiDetail`),
  or :class:`RemoteNotFound`;
* ``list_products`` (only with the ``products`` capability): every product, with its quota
  and the remote ids of its APIs (:class:`RemoteProduct`);
* with the ``subscription_provisioning`` capability, what an approved subscription needs
  (``provisioning.py`` holds the shapes): ``grant`` (the developer, an app of the portal
  app's name holding its key, and the API's or product's access, created as needed and
  idempotently), ``withdraw`` (one product taken back; the remote app revoked when it has
  none left), ``set_key`` (a rotated key), ``remove_app`` (a deleted portal app) and
  ``usage`` (the app's traffic on the granted product, for the subscription's analytics).

A third source (APISIX's or Kong's Admin API) is one module that subclasses
:class:`Connector`, sets its class attributes, implements those methods with
:meth:`Outbound.read` and :func:`json_of`, and is listed in ``registry.py``.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import dataclasses
import json
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import httpx

from portico.core.egress import (
    BodyTooLarge,
    EgressGuard,
    EgressRefused,
    guarded_get,
    guarded_request,
    read_bounded,
)
from portico.marketplace.connectors.provisioning import (
    Granted,
    Grantee,
    Target,
    Usage,
    Window,
)

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
#: how many times a read is tried when the remote side cannot be reached or answers 5xx
READ_ATTEMPTS = 3
#: seconds before the second attempt; doubled before each next one (0.2 s, 0.4 s)
READ_BACKOFF = 0.2


class ConnectorError(Exception):
    """The remote side cannot be used with this configuration; ``message`` says why, in
    words an administrator can act on, and ``field`` names the configuration field at fault
    when one is."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class RemoteNotFound(ConnectorError):
    """The remote side has no API (or product) with the id asked for."""


class ProductsUnsupported(ConnectorError):
    """The source type has no products (its ``products`` capability is false)."""


class _Unreachable(ConnectorError):
    """The connection could not be made (refused, reset, timed out connecting): worth
    another attempt, unlike a refusal by the guard or a malformed request."""


@dataclass(frozen=True)
class RemoteApi:
    """An API as the remote side lists it."""

    #: its id on the connection: what ``fetch_api`` takes and what a node records
    api_id: str
    title: str
    #: the remote side's own identifier, when it has one
    uuid: str | None = None
    overview: str = ""
    version: str = ""
    #: the remote revision, when the listing tells it (``fetch_api`` always does)
    revision: str | None = None
    #: why it cannot be imported as it stands (a document that cannot be read), or None
    problem: str | None = None


@dataclass(frozen=True)
class RemoteApiDetail(RemoteApi):
    """An API with what an import stores: its OpenAPI document (self-contained: no ``$ref``
    outside it), or None when the remote side has none. The document is read with
    ``core.openapi_document.parse_document`` (bounded; JSON values only, no NUL): what the
    store can hold."""

    documentation: dict[str, Any] | None = None


@dataclass(frozen=True)
class RemoteProduct:
    """A product as the remote side lists it."""

    product_id: str
    title: str
    uuid: str | None = None
    description: str = ""
    #: ``{limit, interval, interval_unit, ...}`` as the remote gateway enforces it, or None
    quota: dict[str, Any] | None = None
    #: the ``api_id`` of each of its APIs, in the product's order
    api_ids: tuple[str, ...] = ()


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
    guard and pinned to the address checked; bounded in time and size.

    ``reading()`` gives a copy that shares one client (its pooled connections) among the
    many reads of one unit of work (an inventory, an import); without it each call opens
    and closes a client of its own."""

    guard: EgressGuard
    timeout: float = DEFAULT_TIMEOUT
    client: httpx.AsyncClient | None = None
    attempts: int = READ_ATTEMPTS
    backoff: float = READ_BACKOFF

    @contextlib.asynccontextmanager
    async def reading(self) -> AsyncIterator[Outbound]:
        if self.client is not None:
            yield self
            return
        async with httpx.AsyncClient(timeout=self.timeout, trust_env=False) as client:
            yield dataclasses.replace(self, client=client)

    async def get(
        self, url: str, *, headers: Mapping[str, str] | None = None, config_field: str | None
    ) -> tuple[httpx.Response, bytes]:
        """The answer to ``GET url`` and its body (at most :data:`MAX_BODY_BYTES`); a refused
        destination, a failed connection or a timeout is a :class:`ConnectorError` on
        ``config_field``. Tried once: what a connection's check uses."""
        if self.client is not None:
            return await self._get(self.client, url, headers, config_field)
        async with httpx.AsyncClient(timeout=self.timeout, trust_env=False) as client:
            return await self._get(client, url, headers, config_field)

    async def read(
        self, url: str, *, headers: Mapping[str, str] | None = None
    ) -> tuple[httpx.Response, bytes]:
        """``get`` for a connector's reads: tried again (at most :attr:`attempts` times,
        after :attr:`backoff` seconds, doubled each time) when the connection cannot be
        made or the answer is a 5xx; the last answer (a 5xx included) is returned, the last
        failure raised. A timeout waiting for an answer is not retried: the wait would
        multiply."""
        for attempt in range(1, self.attempts + 1):
            last = attempt == self.attempts
            try:
                response, body = await self.get(url, headers=headers, config_field=None)
            except _Unreachable:
                if last:
                    raise
            else:
                if response.status_code < 500 or last:
                    return response, body
            await asyncio.sleep(self.backoff * 2 ** (attempt - 1))
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def read_json(
        self, url: str, *, headers: Mapping[str, str] | None = None
    ) -> tuple[int, Any]:
        """The status of ``GET url`` (through :meth:`read`) and its body as JSON (None when
        the body is empty); a body that is not JSON is a :class:`ConnectorError`."""
        response, body = await self.read(url, headers=headers)
        return response.status_code, json_of(url, response.status_code, body) if body else None

    async def send(
        self,
        method: str,
        url: str,
        *,
        body: Any = None,
        headers: Mapping[str, str] | None = None,
    ) -> tuple[httpx.Response, bytes]:
        """A write (``POST``, ``PATCH``, ``DELETE``...) to ``url`` with ``body`` as JSON, and
        the answer's body (at most :data:`MAX_BODY_BYTES`). Tried once, whatever happens: a
        write is not repeated blindly here; the caller's durable retry (the subscription
        provisioning's due time) decides when to try again. Failures as :meth:`get`'s."""
        if self.client is not None:
            return await self._send(self.client, method, url, body, headers)
        async with httpx.AsyncClient(timeout=self.timeout, trust_env=False) as client:
            return await self._send(client, method, url, body, headers)

    async def send_json(
        self,
        method: str,
        url: str,
        *,
        body: Any = None,
        headers: Mapping[str, str] | None = None,
    ) -> tuple[int, Any]:
        """The status of :meth:`send` and its body as JSON (None when empty)."""
        response, raw = await self.send(method, url, body=body, headers=headers)
        return response.status_code, json_of(url, response.status_code, raw) if raw else None

    async def _send(
        self,
        client: httpx.AsyncClient,
        method: str,
        url: str,
        body: Any,
        headers: Mapping[str, str] | None,
    ) -> tuple[httpx.Response, bytes]:
        kwargs: dict[str, Any] = {"headers": dict(headers or {})}
        if body is not None:
            kwargs["json"] = body
        with _failures(url, self.timeout, None):
            response = await guarded_request(client, self.guard, method, url, stream=True, **kwargs)
            return response, await _read_bounded(response, url, None)
        raise AssertionError("unreachable: _failures raises or the block returns")

    async def _get(
        self,
        client: httpx.AsyncClient,
        url: str,
        headers: Mapping[str, str] | None,
        config_field: str | None,
    ) -> tuple[httpx.Response, bytes]:
        with _failures(url, self.timeout, config_field):
            response = await guarded_get(client, self.guard, url, headers=dict(headers or {}))
            return response, await _read_bounded(response, url, config_field)
        raise AssertionError("unreachable: _failures raises or the block returns")


@contextlib.contextmanager
def _failures(url: str, timeout: float, config_field: str | None) -> Iterator[None]:
    """What goes wrong on the way to ``url``, as :class:`ConnectorError` (never the text of
    an error that may quote a header, credentials included)."""
    try:
        yield
    except EgressRefused as error:
        raise ConnectorError(f"{url} may not be reached: {error}", field=config_field) from None
    except (httpx.ConnectError, httpx.ConnectTimeout) as error:
        raise _Unreachable(
            f"cannot connect to {url}: {_reason(error)}", field=config_field
        ) from None
    except httpx.TimeoutException:
        raise ConnectorError(
            f"{url} did not answer within {timeout:g} seconds", field=config_field
        ) from None
    except httpx.LocalProtocolError:
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


def json_of(url: str, status: int, body: bytes) -> Any:
    """``body`` read as JSON, or a :class:`ConnectorError` saying the answer was not JSON."""
    try:
        return json.loads(body)
    except ValueError:  # UnicodeDecodeError included
        raise ConnectorError(f"{url} answered {status} with a body that is not JSON") from None


def json_object(value: Any, what: str) -> dict[str, Any]:
    """``value`` if it is a JSON object, else a :class:`ConnectorError` naming ``what``."""
    if not isinstance(value, dict):
        raise ConnectorError(f"{what} is not a JSON object")
    return value


def json_text(value: Any, what: str, *, default: str | None = None) -> str:
    """``value`` if it is a string (``default`` when it is absent and one is given)."""
    if value is None and default is not None:
        return default
    if not isinstance(value, str):
        raise ConnectorError(f"{what} is not a string")
    return value


async def _read_bounded(response: httpx.Response, url: str, config_field: str | None) -> bytes:
    try:
        return await read_bounded(response, MAX_BODY_BYTES)
    except BodyTooLarge:
        raise ConnectorError(
            f"{url} answered more than {MAX_BODY_BYTES} bytes", field=config_field
        ) from None


def _reason(error: httpx.HTTPError) -> str:
    return str(error) or type(error).__name__


class ProvisioningUnsupported(ConnectorError):
    """The source type cannot give access (``subscription_provisioning`` is false)."""


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

    @abc.abstractmethod
    async def list_apis(self, config: Mapping[str, Any], outbound: Outbound) -> list[RemoteApi]:
        """Every API the remote side exposes, in its order; :class:`ConnectorError` when the
        remote side cannot be read (one API that cannot be is listed with its ``problem``)."""

    @abc.abstractmethod
    async def fetch_api(
        self,
        config: Mapping[str, Any],
        outbound: Outbound,
        api_id: str,
        *,
        listed: RemoteApi | None = None,
    ) -> RemoteApiDetail:
        """The API ``api_id`` with its document and revision; :class:`RemoteNotFound` when
        the remote side has none of that id. ``listed`` is what ``list_apis`` said of it,
        when the caller has it: a connector may skip reading again what it already tells."""

    async def list_products(
        self, config: Mapping[str, Any], outbound: Outbound
    ) -> list[RemoteProduct]:
        """Every product of the remote side (connectors with the ``products`` capability)."""
        raise ProductsUnsupported(f"{self.label} ({self.id}) sources have no products")

    # ---------------------------------------------- provisioning (subscription_provisioning)
    #
    # Each method is idempotent (run again after a failure, it finishes the work rather than
    # doing it twice) and raises ConnectorError when the remote side cannot be used now:
    # the caller records the message and tries again later.

    async def grant(
        self, config: Mapping[str, Any], outbound: Outbound, grantee: Grantee, target: Target
    ) -> Granted:
        """Give ``grantee``'s app access to ``target``: the remote developer and app made
        when missing (the app holding ``grantee.app_key``), the product (or the API's
        implied product) added to the app's products, the app active."""
        raise self._unsupported()

    async def withdraw(
        self, config: Mapping[str, Any], outbound: Outbound, *, app_id: str, product_id: str
    ) -> None:
        """Take ``product_id`` out of the remote app's products; revoke the app when it has
        none left. An app or a product already gone is done."""
        raise self._unsupported()

    async def set_key(
        self, config: Mapping[str, Any], outbound: Outbound, *, app_id: str, key: str
    ) -> None:
        """The remote app's key-auth key is now ``key`` (the portal app's rotated key)."""
        raise self._unsupported()

    async def remove_app(
        self, config: Mapping[str, Any], outbound: Outbound, *, app_id: str
    ) -> None:
        """Delete the remote app (its portal app was deleted); one already gone is done."""
        raise self._unsupported()

    async def usage(
        self,
        config: Mapping[str, Any],
        outbound: Outbound,
        *,
        app_id: str,
        product_id: str,
        window: Window,
    ) -> Usage:
        """The remote app's traffic on ``product_id`` over the last ``window``."""
        raise self._unsupported()

    def _unsupported(self) -> ProvisioningUnsupported:
        return ProvisioningUnsupported(
            f"{self.label} ({self.id}) sources cannot provision subscriptions"
        )


def capabilities(**enabled: bool) -> Mapping[str, bool]:
    """The full capability map: every capability, false unless named true."""
    unknown = set(enabled) - set(CAPABILITIES)
    if unknown:
        raise ValueError(f"unknown capabilities {sorted(unknown)}")
    return {name: enabled.get(name, False) for name in CAPABILITIES}
