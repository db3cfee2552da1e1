"""The plugin contract: one module per plugin, each exporting ``PLUGIN``.

A plugin module holds everything about its plugin (as APISIX's ``apisix/plugins/*.lua`` and
Kong's ``kong/plugins/<name>/schema.lua`` do): the public name, the category, the default
order (lower runs first), whether an attachment may override that order with
``_meta: {"order": N}``, the typed config model (every field described, unknown keys
refused), the consumer-credential model of authentication plugins, and the semantic checks
that a JSON schema cannot express. The management service validates deploys with exactly the
checks the runtime uses, and serves the JSON schema generated from the same models, so the
schema endpoint, the deploy validation and the runtime can never disagree.

Runtime hooks (request, response and log phases) are added to these modules by the gateway
runtime; nothing here acts on traffic.
"""

from __future__ import annotations

import enum
import ipaddress
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, ClassVar
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from portico.gateway.context import PluginRuntime
    from portico.gateway.plugin_services import RuntimeServices


def _http_url(value: str) -> str:
    """An absolute http(s) URL with a host, no credentials in it, at most 2048 characters.
    Whether the runtime may reach it (the SSRF guard) is decided where it connects."""
    if len(value) > 2048:
        raise ValueError("must be at most 2048 characters long")
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError as error:
        raise ValueError(f"not a valid URL: {error}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("must be an absolute http:// or https:// URL")
    if parts.username or parts.password:
        raise ValueError("must not carry credentials; use the plugin's auth fields")
    if port == 0:
        raise ValueError("port must be from 1 to 65535")
    return value


def _cidr(value: str) -> str:
    try:
        ipaddress.ip_network(value, strict=False)
    except ValueError:
        raise ValueError(f"{value!r} is not an IP address or CIDR") from None
    return value


def _regex(value: str) -> str:
    try:
        re.compile(value)
    except re.error as error:
        raise ValueError(f"invalid regular expression: {error}") from None
    return value


HttpUrl = Annotated[str, AfterValidator(_http_url)]
IpOrCidr = Annotated[str, AfterValidator(_cidr)]
Regex = Annotated[str, Field(min_length=1, max_length=4096), AfterValidator(_regex)]
#: a header (or query argument, or cookie) name: an RFC 9110 token
HEADER_NAME = r"^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,256}$"


#: a secret given by reference (the seed's syntax), resolved by the management service at
#: deploy: an environment variable of the control plane, or a secret of its store
ENV_REFERENCE = re.compile(r"\$env://([A-Za-z_][A-Za-z0-9_]{0,127})")
STORE_REFERENCE = re.compile(r"\$secret://([A-Za-z0-9][A-Za-z0-9._-]{0,63})")
#: the form deploy gives a resolved secret in a snapshot: sealed under the server secret
#: (``core.sealing``), opened by the gateway; never accepted from a revision
SEALED_PREFIX = "$sealed:"


def secret_reference(value: str) -> tuple[str, str] | None:
    """``("env" | "secret", name)`` for a reference, None for any other value; a value
    that starts like one without being one is a ``ValueError``."""
    for kind, pattern in (("env", ENV_REFERENCE), ("secret", STORE_REFERENCE)):
        prefix = f"${kind}://"
        if value.startswith(prefix):
            match = pattern.fullmatch(value)
            if match is None:
                raise ValueError(
                    f"{value!r} is not a valid reference: write {prefix}NAME "
                    + ("(letters, digits, '_')" if kind == "env" else "(letters, digits, '._-')")
                )
            return kind, match.group(1)
    return None


class Category(enum.StrEnum):
    SECURITY = "Security"
    AUTHENTICATION = "Authentication"
    TRAFFIC = "Traffic"
    TRANSFORMATION = "Transformation"
    OBSERVABILITY = "Observability"
    AI = "AI"


class Meta(BaseModel):
    """Per-attachment settings that are not the plugin's own configuration."""

    model_config = ConfigDict(extra="forbid", strict=True)

    order: int = Field(
        ge=0, le=10_000, description="Overrides the plugin's default execution order here."
    )


class PluginConfig(BaseModel):
    """Base of every plugin's configuration model: strict JSON types, no unknown keys.

    ``_meta`` is accepted only by plugins whose spec says ``reorderable``; the registry
    refuses it for the others.
    """

    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=False)

    meta: Meta | None = Field(
        None, alias="_meta", description='Attachment settings, e.g. {"order": 105}.'
    )

    #: fields that hold secrets: never echoed back in full by the management API
    secret_fields: ClassVar[frozenset[str]] = frozenset()
    #: fields that may name their secret by reference (``$env://NAME``, ``$secret://NAME``),
    #: resolved at deploy into the snapshot's sealed form (``SEALED_PREFIX``)
    secret_references: ClassVar[frozenset[str]] = frozenset()


class ConsumerCredential(BaseModel):
    """Base of the credential an authentication plugin keeps on a consumer."""

    model_config = ConfigDict(extra="forbid", strict=True)

    secret_fields: ClassVar[frozenset[str]] = frozenset()


@dataclass(frozen=True)
class PluginSpec:
    name: str
    category: Category
    order: int
    reorderable: bool
    config: type[PluginConfig]
    description: str
    consumer: type[ConsumerCredential] | None = None
    #: plugins of these categories see the request before it is proxied
    phases: tuple[str, ...] = field(default=("request",))
    #: builds the runtime side of one attachment; None: the runtime does not run it yet
    runtime: Callable[[Any, RuntimeServices], PluginRuntime] | None = None
    #: whether a consumer's own plugins may hold it (False: it acts before the consumer is
    #: known, as request-id does)
    consumer_scope: bool = True
    #: plugins that cannot share a chain with this one (``registry.conflicting``): both
    #: sides declare it
    conflicts: tuple[str, ...] = ()

    def json_schema(self) -> dict[str, Any]:
        schema = self.config.model_json_schema(by_alias=True, mode="validation")
        if not self.reorderable:
            schema.get("properties", {}).pop("_meta", None)
        return schema

    def consumer_schema(self) -> dict[str, Any] | None:
        return self.consumer.model_json_schema(mode="validation") if self.consumer else None
