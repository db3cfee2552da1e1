"""Process settings, read once from ``PORTICO_*`` environment variables (and ``.env``).

The embedded default runs with no configuration at all: SQLite under ``var/``, and a
secret key generated into ``var/secret.key`` on first start. Outside ``development``,
a placeholder secret (one of the values people paste from examples) is refused at start.
"""

from __future__ import annotations

import ipaddress
import os
import secrets
from functools import cached_property
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

PLACEHOLDER_SECRETS = frozenset(
    {"", "change-me", "changeme", "change_me", "secret", "development", "dev", "portico", "test"}
)
MIN_SECRET_LENGTH = 32


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="PORTICO_", env_file=".env", extra="ignore", frozen=True
    )

    environment: Literal["development", "test", "production"] = Field(
        "production",
        description="'development' relaxes the secret checks; anything else enforces them.",
    )
    data_dir: Path = Field(Path("var"), description="Where the embedded defaults keep state.")
    database_url: str = Field(
        "", description="SQLAlchemy URL; empty means SQLite at <data_dir>/portico.db."
    )
    database_echo: bool = False
    secret_key: SecretStr = Field(
        SecretStr(""),
        description="Signs access tokens. Empty: generated once into <data_dir>/secret.key.",
    )
    previous_secret_keys: list[SecretStr] = Field(
        default_factory=list,
        description="Keys still accepted for verification during a rotation.",
    )
    listen: str = Field("127.0.0.1:9180", description="host:port of the control plane.")
    gateway_listen: str = Field("127.0.0.1:9080", description="host:port of the gateway.")
    metrics_listen: str = Field("127.0.0.1:9091", description="host:port of /metrics.")
    public_url: str = Field("", description="How users reach the control plane (links).")
    console_dir: Path = Field(
        Path(__file__).resolve().parents[3] / "web" / "console" / "dist",
        description="The built web console, served under /console/ (`make run` builds it).",
    )
    portal_dir: Path = Field(
        Path(__file__).resolve().parents[3] / "web" / "portal" / "dist",
        description="The built developer portal, served under /portal/ (`make run` builds it).",
    )
    access_token_ttl_seconds: int = Field(3600, ge=60, le=86400)
    refresh_token_ttl_seconds: int = Field(30 * 86400, ge=3600)
    max_body_bytes: int = Field(
        8 * 1024 * 1024,
        ge=1024,
        description="Largest request body; OpenAPI imports (5 MiB) and route specs of "
        "thousands of routes must fit.",
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    log_format: Literal["auto", "text", "json"] = Field(
        "auto",
        description="Logs on stderr: 'text' (one readable line per record), 'json' (one "
        "object per line), or 'auto': text when stderr is a terminal, JSON otherwise.",
    )
    log_json: bool | None = Field(
        None,
        description="Former switch (PORTICO_LOG_JSON), still read when PORTICO_LOG_FORMAT "
        "is 'auto': true means 'json', false 'text'.",
    )
    trusted_proxies: list[str] = Field(
        default_factory=list, description="CIDRs whose X-Forwarded-For is believed."
    )
    gateway_trusted_proxies: list[str] = Field(
        default_factory=list,
        description="CIDRs of load balancers in front of the gateway whose X-Forwarded-For "
        "names the client.",
    )
    gateway_egress_allow: list[str] = Field(
        default_factory=list,
        description="Internal CIDRs plugins may call (http-logger endpoints, JWKS...); the "
        "SSRF guard refuses loopback, private and link-local addresses otherwise.",
    )
    management_egress_allow: list[str] = Field(
        default_factory=list,
        description="Internal CIDRs the management service may fetch from (an identity "
        "provider's metadataUrl); the SSRF guard refuses loopback, private and link-local "
        "addresses otherwise.",
    )
    marketplace_egress_allow: list[str] = Field(
        default_factory=list,
        description="Internal CIDRs the marketplace's connectors may call (gateway "
        "connections, OpenAPI document URLs); the SSRF guard refuses loopback, private, "
        "link-local and metadata addresses otherwise. The control plane's own address "
        "(PORTICO_PUBLIC_URL, PORTICO_LISTEN) is always reachable.",
    )
    marketplace_connector_timeout_seconds: float = Field(
        10.0,
        gt=0,
        le=120,
        description="How long a connector waits for a remote side (connect, each read) "
        "when it checks a connection.",
    )
    marketplace_governance_disabled_rules: list[str] = Field(
        default_factory=list,
        description="Governance rule ids (JSON list) switched off for every linting run, "
        'e.g. ["style-operation-tags"]; an unknown id fails the run naming it.',
    )
    marketplace_health_interval_seconds: float = Field(
        300.0,
        ge=0,
        le=86400,
        description="How often every published API's health URL is checked (a job queued "
        "by the workers); 0 turns the scheduled checks off (on-demand checks remain).",
    )
    marketplace_health_path: str = Field(
        "/health",
        pattern=r"^/[^?#\s]*$",
        description="The path appended to an API's first server URL to make its health URL "
        "when its OpenAPI document names none (x-health-url).",
    )
    marketplace_health_timeout_seconds: float = Field(
        10.0, gt=0, le=120, description="How long a health check waits for an answer."
    )
    marketplace_health_degraded_ms: float = Field(
        1000.0,
        ge=0,
        description="An API answering its health check slower than this (milliseconds) is "
        "degraded rather than up.",
    )
    telemetry_interval_seconds: float = Field(
        5.0, gt=0, le=300, description="How often gateways ship their traffic rollups."
    )
    analytics_minute_retention_days: int = Field(
        7,
        ge=1,
        le=3650,
        description="How long per-minute traffic rollups are kept (then only their hours).",
    )
    analytics_hour_retention_days: int = Field(
        400,
        ge=1,
        le=3650,
        description="How long hourly traffic rollups are kept; older ones are deleted, and "
        "the deletion logged with the requests they held.",
    )
    analytics_retention_interval_seconds: float = Field(
        3600.0, gt=0, le=86400, description="How often the analytics retention sweep runs."
    )
    analytics_compaction_interval_seconds: float = Field(
        60.0,
        gt=0,
        le=86400,
        description="How often closed hours are compacted for percentile queries (a pass "
        "with nothing due reads only the hours' fingerprints).",
    )
    analytics_compaction_lookback_hours: int = Field(
        48,
        ge=1,
        le=24 * 31,
        description="How far back compaction looks for hours that are new or changed since "
        "they were compacted; older ones keep their compaction, or are read uncompacted.",
    )
    gateway_node_id: str = Field("", description="This gateway node's id; empty: generated.")
    gateway_resolvers: list[str] = Field(
        default_factory=list,
        description="DNS servers (JSON list of 'host:port', host an IP address, IPv6 in "
        "brackets) that resolve upstreams with DNS discovery; empty: the system's "
        "(/etc/resolv.conf).",
    )
    gateway_discovery_min_ttl_seconds: float = Field(
        1.0,
        gt=0,
        le=3600,
        description="A discovered answer is used at least this long, whatever its TTL says "
        "(and failed attempts are retried after it, then twice, four times... as long).",
    )
    gateway_discovery_max_ttl_seconds: float = Field(
        300.0,
        gt=0,
        le=86400,
        description="A discovered answer is used at most this long: the name is resolved "
        "again by then even when its TTL is longer.",
    )
    marketplace_modules: list[str] | None = Field(
        None,
        description="Marketplace modules to install (JSON list); unset: all of them.",
    )
    bootstrap_admin_email: str = "admin@example.com"
    bootstrap_admin_password: SecretStr | None = None
    bootstrap_org_name: str = "Default"
    redis_url: str = Field(
        "",
        description="Redis shared by the gateway nodes of an environment: product-quota "
        "counts there, so that N nodes together admit exactly a product's limit; empty: "
        "each node counts alone.",
    )
    smtp_url: str = Field(
        "",
        description="Outgoing mail: smtp://user:pass@host:port (?starttls=1 to require "
        "STARTTLS), or smtps:// for implicit TLS; empty: emails are logged, not sent.",
    )
    mail_from: str = Field("portico@localhost", description="The From address of emails.")
    run_workers: bool = Field(
        True, description="Run the mailer and the jobs worker in `portico serve`."
    )
    worker_poll_seconds: float = Field(
        2.0, gt=0, le=60, description="How often the workers look for due emails and jobs."
    )
    idp_web_api_key: SecretStr | None = Field(
        None,
        description="The identity provider's web API key; until it is set here or with "
        "`portico admin-api set-web-api-key`, the admin API issues no tokens (503).",
    )
    admin_api_session_bypass_users: list[str] = Field(
        default_factory=list,
        description="Emails (JSON list) that may call the admin API with their portal "
        "session cookie instead of a token, each use audited; empty (the default): off.",
    )

    @field_validator("data_dir")
    @classmethod
    def _absolute_data_dir(cls, value: Path) -> Path:
        return value.expanduser().resolve()

    @field_validator("gateway_resolvers")
    @classmethod
    def _resolver_addresses(cls, values: list[str]) -> list[str]:
        return [resolver_address(value) for value in values]

    @model_validator(mode="after")
    def _discovery_bounds(self) -> Settings:
        if self.gateway_discovery_min_ttl_seconds > self.gateway_discovery_max_ttl_seconds:
            raise ValueError(
                "PORTICO_GATEWAY_DISCOVERY_MIN_TTL_SECONDS must not exceed "
                "PORTICO_GATEWAY_DISCOVERY_MAX_TTL_SECONDS"
            )
        return self

    @model_validator(mode="after")
    def _refuse_placeholder_secrets(self) -> Settings:
        key = self.secret_key.get_secret_value()
        if self.environment != "development" and key and is_placeholder(key):
            raise ValueError(
                "PORTICO_SECRET_KEY is a placeholder or shorter than "
                f"{MIN_SECRET_LENGTH} characters; set a random value "
                "(python -c 'import secrets; print(secrets.token_urlsafe(48))')"
            )
        return self

    @cached_property
    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite+aiosqlite:///{self.data_dir / 'portico.db'}"

    @property
    def effective_log_format(self) -> Literal["auto", "text", "json"]:
        """``log_format``, unless left at ``auto`` while the former ``log_json`` is set."""
        if self.log_format == "auto" and self.log_json is not None:
            return "json" if self.log_json else "text"
        return self.log_format

    @property
    def is_sqlite(self) -> bool:
        return self.resolved_database_url.startswith("sqlite")

    def signing_keys(self) -> list[str]:
        """Current key first, then the ones still accepted during a rotation."""
        current = self.secret_key.get_secret_value() or load_or_create_secret(self.data_dir)
        return [current, *(k.get_secret_value() for k in self.previous_secret_keys)]


def is_placeholder(value: str) -> bool:
    return value.strip().lower() in PLACEHOLDER_SECRETS or len(value) < MIN_SECRET_LENGTH


def load_or_create_secret(data_dir: Path) -> str:
    """The embedded default's key: random, created once, readable by the owner only."""
    path = data_dir / "secret.key"
    if path.exists():
        return path.read_text().strip()
    data_dir.mkdir(parents=True, exist_ok=True)
    value = secrets.token_urlsafe(48)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process won the race: use its key
        return path.read_text().strip()
    with os.fdopen(fd, "w") as handle:
        handle.write(value + "\n")
    return value


def resolver_address(value: str) -> str:
    """A DNS server of ``PORTICO_GATEWAY_RESOLVERS`` as ``ip:port`` (``[ipv6]:port``), the
    port 53 when none is given; ``ValueError`` naming the setting otherwise."""
    text = value.strip()
    host, port = text, "53"
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        if rest:
            port = rest.removeprefix(":") if rest.startswith(":") else ""
    elif text.count(":") == 1:
        host, _, port = text.partition(":")
    try:
        address = ipaddress.ip_address(host)
        number = int(port)
    except ValueError:
        address, number = None, 0
    if address is None or not 1 <= number <= 65535 or not port.isdigit():
        raise ValueError(
            f"PORTICO_GATEWAY_RESOLVERS: {value!r} must be an IP address and a port, "
            "e.g. '127.0.0.1:53' or '[::1]:53'"
        )
    return f"[{address}]:{number}" if address.version == 6 else f"{address}:{number}"


def split_host_port(listen: str) -> tuple[str, int]:
    host, _, port = listen.rpartition(":")
    return host.strip("[]") or "127.0.0.1", int(port)
