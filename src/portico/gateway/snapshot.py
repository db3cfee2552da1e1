"""The environment config snapshot: the contract between the control plane and gateway nodes.

The management service builds one snapshot per change of an environment (deploy, undeploy,
global plugin, gateway hosts, and the consumers, apps, developers, products and upstreams it
carries) and serves it at ``/api/dataplane/v1/envs/{envId}/config``;
a gateway node loads it whole or refuses it whole. It holds everything a node needs and
nothing it must look up elsewhere: the hostnames, every deployed route with its API and its
effective plugins (global < service < route, a narrower scope replacing a wider one — the
consumer scope is applied at run time, once the consumer is known), the upstreams the routes
target, the consumers (with the apps, developers and products they stand for) and the global
plugins.

``content_hash`` covers everything but ``version`` and ``generated_at``, so two snapshots
with the same content have the same hash (and ETag) whatever their version.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Scope = Literal["global", "service", "route", "consumer"]


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PluginAttachment(_Frozen):
    name: str
    scope: Scope
    order: int = Field(description="Effective order: the attachment's _meta.order or the default.")
    config: dict[str, Any] = Field(description="Validated configuration, defaults filled in.")


class SnapshotRoute(_Frozen):
    id: str = Field(description="Stable within a revision: '<revisionId>:<index>'.")
    api_id: str
    api_name: str
    revision_id: str
    revision_number: int
    name: str
    uri: str
    methods: list[str] = Field(description="Empty: every method.")
    hosts: list[str] = Field(description="Empty: any host of the environment.")
    priority: int
    status: int
    upstream_id: str
    plugins: list[PluginAttachment] = Field(description="Ordered by effective order.")


class SnapshotUpstream(_Frozen):
    id: str
    name: str
    specification: dict[str, Any]


class RetiringCredential(_Frozen):
    """A credential replaced by a rotation that still works until ``expires_at``."""

    plugin: str
    credential: dict[str, Any]
    expires_at: float = Field(description="Epoch seconds after which it no longer works.")


class SnapshotQuota(_Frozen):
    limit: int = Field(description="Requests per window; -1: unlimited.")
    interval: int
    interval_unit: Literal["second", "minute", "hour", "day", "month"]
    key_scope: Literal["app", "developer"] = "app"


class SnapshotProduct(_Frozen):
    """A product deployed in the environment: the APIs it covers and its quota."""

    id: str
    name: str
    api_ids: list[str]
    quota: SnapshotQuota | None = Field(description="None: traffic is refused (403).")


class SnapshotApp(_Frozen):
    """The developer app that owns a consumer."""

    id: str
    name: str
    developer_id: str
    developer_email: str
    product_ids: list[str] = Field(description="The app's products, lowest rank first.")


class SnapshotConsumer(_Frozen):
    id: str
    username: str
    credentials: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="Authentication plugin name → credential."
    )
    plugins: list[PluginAttachment] = Field(default_factory=list)
    retiring: list[RetiringCredential] = Field(
        default_factory=list, description="Rotated-out credentials still in their grace period."
    )
    app: SnapshotApp | None = Field(None, description="The app owning this consumer, if any.")


class EnvironmentSnapshot(_Frozen):
    version: int
    content_hash: str = ""
    generated_at: str
    org_id: str
    environment_id: str
    environment_name: str
    gateway_hosts: list[str]
    routes: list[SnapshotRoute]
    upstreams: dict[str, SnapshotUpstream]
    consumers: list[SnapshotConsumer]
    global_plugins: list[PluginAttachment]
    products: list[SnapshotProduct] = Field(
        default_factory=list, description="Products deployed in the environment."
    )


_UNHASHED = frozenset({"version", "content_hash", "generated_at"})


def content_hash(document: dict[str, Any]) -> str:
    """SHA-256 of the canonical JSON of ``document`` without its version and timestamps."""
    content = {k: v for k, v in document.items() if k not in _UNHASHED}
    canonical = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()
