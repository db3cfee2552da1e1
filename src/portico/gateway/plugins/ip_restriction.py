"""ip-restriction: admit (whitelist) or refuse (blacklist) clients by address or CIDR.

The client address is the socket peer's; a forwarded address is believed only from trusted
proxies, which are a gateway setting (as APISIX's real-ip and Kong's ``trusted_ips``), not a
per-attachment one.
"""

from __future__ import annotations

from typing import Self

from pydantic import ConfigDict, Field, model_validator

from portico.core.validation import invalid
from portico.gateway.plugins.base import Category, IpOrCidr, PluginConfig, PluginSpec


class IpRestrictionConfig(PluginConfig):
    # exactly one of the two lists, as APISIX's schema says; checked in _exactly_one_list
    model_config = ConfigDict(
        json_schema_extra={"oneOf": [{"required": ["whitelist"]}, {"required": ["blacklist"]}]}
    )

    whitelist: list[IpOrCidr] | None = Field(
        None,
        min_length=1,
        max_length=4096,
        description="Only these addresses or CIDRs (IPv4 or IPv6) are admitted.",
    )
    blacklist: list[IpOrCidr] | None = Field(
        None,
        min_length=1,
        max_length=4096,
        description="These addresses or CIDRs (IPv4 or IPv6) are refused; others admitted.",
    )
    message: str = Field(
        "Your IP address is not allowed",
        min_length=1,
        max_length=1024,
        description="Message of the 403 answer to a refused client.",
    )

    @model_validator(mode="after")
    def _exactly_one_list(self) -> Self:
        # as APISIX's oneOf: mixing both would make the outcome of an address in both unclear
        if self.whitelist is None and self.blacklist is None:
            invalid(("whitelist",), 'property "whitelist" or "blacklist" is required')
        if self.whitelist is not None and self.blacklist is not None:
            invalid(("blacklist",), '"whitelist" and "blacklist" are exclusive: give only one')
        return self


PLUGIN = PluginSpec(
    name="ip-restriction",
    category=Category.SECURITY,
    order=10,
    reorderable=False,
    config=IpRestrictionConfig,
    description="Admits only the whitelisted (or refuses the blacklisted) client addresses and "
    "CIDRs, IPv4 and IPv6; refused → 403 with `message`.",
)
