"""search-logger: log entries bulk-indexed into Elasticsearch or OpenSearch.

A batch is one ``POST <endpoint_addr>/_bulk`` (NDJSON: a ``{"create": {"_index": ...}}``
action line, then the entry, per entry), with basic auth when ``auth`` is set. Elasticsearch
answers 200 even when some documents were refused: its ``errors`` flag is read, and a partial
failure is a failed send (the batch is retried whole, then dropped and counted).
"""

from __future__ import annotations

import base64
import dataclasses
import json

from pydantic import BaseModel, ConfigDict, Field, field_validator

from portico.gateway.plugin_services import RuntimeServices
from portico.gateway.plugins._batching import BatchingConfig
from portico.gateway.plugins._log_sink import EntryBatch, HttpPoster, LoggerRuntime, Sink
from portico.gateway.plugins.base import Category, HttpUrl, PluginSpec
from portico.gateway.telemetry.batch import BatchFailed

_FORBIDDEN = set('\\/*?"<>| ,#')


def index_name_error(name: str) -> str | None:
    """Why Elasticsearch would refuse ``name`` as an index, or None (its documented rules)."""
    if name != name.lower():
        return "index must be lowercase"
    if bad := sorted(_FORBIDDEN.intersection(name)):
        return f"index must not contain {' '.join(repr(c) for c in bad)}"
    if name.startswith(("-", "_", "+")):
        return "index must not start with '-', '_' or '+'"
    if name in (".", ".."):
        return "index cannot be '.' or '..'"
    if len(name.encode()) > 255:
        return "index must be at most 255 bytes long"
    return None


class SearchField(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    index: str = Field(min_length=1, description="Index the entries are written to.")

    @field_validator("index")
    @classmethod
    def _valid_index(cls, name: str) -> str:
        reason = index_name_error(name)
        if reason is not None:
            raise ValueError(reason)
        return name


class SearchAuth(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    username: str = Field(min_length=1, max_length=256, description="Basic-auth user name.")
    password: str = Field(min_length=1, max_length=1024, description="Basic-auth password.")


class SearchLoggerConfig(BatchingConfig):
    endpoint_addr: HttpUrl = Field(
        description="Elasticsearch/OpenSearch address, e.g. https://search:9200 (/_bulk is "
        "appended)."
    )
    field: SearchField = Field(description="Where the entries are indexed.")
    auth: SearchAuth | None = Field(None, description="Basic-auth credentials, if required.")
    ssl_verify: bool = Field(True, description="Verify the server's TLS certificate.")
    timeout: int = Field(10, ge=1, le=60, description="Seconds to wait for the server.")

    secret_fields = frozenset({"auth.password"})

    @field_validator("endpoint_addr")
    @classmethod
    def _no_trailing_slash(cls, url: str) -> str:
        # "/_bulk" is appended to it: "http://es:9200/" would give "//_bulk"
        if url.endswith("/"):
            raise ValueError("endpoint_addr must not end with '/' (/_bulk is appended)")
        return url


PLUGIN = PluginSpec(
    name="search-logger",
    category=Category.OBSERVABILITY,
    order=954,
    reorderable=True,
    config=SearchLoggerConfig,
    description="Bulk-indexes log entries into Elasticsearch or OpenSearch.",
)


class SearchLoggerRuntime(LoggerRuntime):
    def __init__(self, config: SearchLoggerConfig, services: RuntimeServices) -> None:
        poster = HttpPoster(services, verify=config.ssl_verify)
        super().__init__(
            PLUGIN.name,
            config,
            services,
            _sink(config, poster),
            between=b"\n" + _action(config) + b"\n",  # an entry's line, then the next's action
            close_grace=min(5.0, float(config.timeout)),
        )
        poster.shared(services, PLUGIN.name, config)


def _action(config: SearchLoggerConfig) -> bytes:
    """The action line before each entry: "create", an append-only write, which data
    streams (the usual home of logs) require."""
    return json.dumps({"create": {"_index": config.field.index}}).encode()


def _sink(config: SearchLoggerConfig, poster: HttpPoster) -> Sink:
    url = config.endpoint_addr + "/_bulk"
    headers = {"content-type": "application/x-ndjson", "accept": "application/json"}
    if config.auth is not None:
        pair = f"{config.auth.username}:{config.auth.password}".encode()
        headers["authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")
    action = _action(config)
    timeout = float(config.timeout)

    async def send(batch: EntryBatch) -> None:
        # the entries were written with the action lines between them (``between``); _bulk
        # wants the last line ended too
        body = (action + b"\n", batch.view(), b"\n")
        answer = await poster.post(url, body, headers, timeout)
        refused = bulk_refusal(answer)
        if refused is not None:
            raise BatchFailed(refused)

    return send


def bulk_refusal(answer: bytes) -> str | None:
    """Why a ``_bulk`` answer says the batch was not (wholly) indexed, or None."""
    try:
        found = json.loads(answer)
    except ValueError:
        return "the _bulk answer is not JSON"
    if not isinstance(found, dict):
        return "the _bulk answer is not a JSON object"
    if not found.get("errors"):
        return None
    items = found.get("items")
    failed = [
        result
        for item in (items if isinstance(items, list) else [])
        if isinstance(item, dict)
        for result in item.values()
        if isinstance(result, dict) and result.get("error")
    ]
    first = failed[0]["error"] if failed else None
    kind = first.get("type", "?") if isinstance(first, dict) else "?"
    return f"{len(failed)} document(s) refused by _bulk (first: {kind})"


PLUGIN = dataclasses.replace(PLUGIN, runtime=SearchLoggerRuntime)
