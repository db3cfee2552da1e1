"""search-logger: log entries bulk-indexed into Elasticsearch or OpenSearch."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from portico.gateway.plugins._batching import BatchingConfig
from portico.gateway.plugins.base import Category, HttpUrl, PluginSpec

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
