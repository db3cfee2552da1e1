"""ip-restriction: admit (whitelist) or refuse (blacklist) clients by address or CIDR.

The client address is the socket peer's; a forwarded address is believed only from trusted
proxies, which are a gateway setting (as APISIX's real-ip and Kong's ``trusted_ips``), not a
per-attachment one.
"""

from __future__ import annotations

import dataclasses
import ipaddress
from typing import Self

from pydantic import ConfigDict, Field, model_validator

from portico.core.validation import invalid
from portico.gateway.context import BasePluginRuntime, Reply, RequestContext
from portico.gateway.plugin_services import RuntimeServices
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


class IpRestrictionRuntime(BasePluginRuntime):
    def __init__(self, config: IpRestrictionConfig, services: RuntimeServices) -> None:
        self.allow = config.whitelist is not None
        listed = config.whitelist if config.whitelist is not None else config.blacklist or []
        self.networks = [ipaddress.ip_network(item, strict=False) for item in listed]
        self.message = config.message

    def listed(self, address: str) -> bool:
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped  # ::ffff:10.0.0.1 is 10.0.0.1
        return any(ip.version == net.version and ip in net for net in self.networks)

    def access(self, ctx: RequestContext) -> Reply | None:
        if self.listed(ctx.client_ip) != self.allow:
            return Reply.error(403, self.message)
        return None


PLUGIN = dataclasses.replace(PLUGIN, runtime=IpRestrictionRuntime)
