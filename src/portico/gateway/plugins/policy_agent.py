"""policy-agent: ask an Open Policy Agent whether to admit the request.

POSTs ``{"input": {request, route, consumer}}`` (plus the body with ``with_body``) to
``host`` + ``/v1/data/<policy>``; ``result.allow`` decides; an unreachable agent refuses.
"""

from __future__ import annotations

import re

from pydantic import Field, field_validator

from portico.gateway.plugins.base import Category, HttpUrl, PluginConfig, PluginSpec

# Rego package path segments joined by "/": no dots, so never ".." in the URL path
_POLICY = r"^[A-Za-z0-9_-]+(/[A-Za-z0-9_-]+)*$"
_POLICY_RE = re.compile(_POLICY)


class PolicyAgentConfig(PluginConfig):
    host: HttpUrl = Field(description="Base URL of the policy agent, e.g. http://opa:8181.")
    policy: str = Field(
        min_length=1,
        max_length=256,
        description='Policy path under /v1/data/, e.g. "example1" or "a/b".',
        json_schema_extra={"pattern": _POLICY},
    )
    with_body: bool = Field(False, description="Send the request body in the input too.")
    timeout: int = Field(
        3000, ge=1, le=60_000, description="Milliseconds to wait for the decision."
    )
    ssl_verify: bool = Field(True, description="Verify the agent's TLS certificate.")

    @field_validator("policy")
    @classmethod
    def _policy_path(cls, policy: str) -> str:
        if not _POLICY_RE.match(policy):
            raise ValueError(
                f'policy "{policy}" must be a path of names (letters, digits, "_", "-") '
                'joined by "/", e.g. "example1" or "a/b"'
            )
        return policy


PLUGIN = PluginSpec(
    name="policy-agent",
    category=Category.SECURITY,
    order=160,
    reorderable=True,
    config=PolicyAgentConfig,
    description="Asks an Open Policy Agent at `host` for /v1/data/<policy> with the request, "
    "route and consumer as input; `result.allow` admits, anything else → 403.",
)
