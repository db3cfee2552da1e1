"""request-id: which header carries the request's id, whether the client gets it back, and
how a new one is made (the seed's plugin, as APISIX's ``request-id``).

The gateway gives every request an id already (``X-Request-Id``, kept when the client sent a
valid one: see ``gateway.request_ids``); this plugin configures that machinery for its
routes rather than adding a second id, so the id it names is the one the upstream receives,
the loggers' entries record (``request_id``), traces can carry (``$request_id``) and the
client gets back. A valid incoming id (1 to 128 of ``A-Z a-z 0-9 . _ : -``) is kept.
"""

from __future__ import annotations

import dataclasses
from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from portico.gateway.context import BasePluginRuntime
from portico.gateway.plugin_services import RuntimeServices
from portico.gateway.plugins.base import HEADER_NAME, Category, PluginConfig, PluginSpec
from portico.gateway.request_ids import RangeIds, RequestIdPolicy, RequestIds

#: the characters an id may hold to be kept when it comes back (``request_ids.VALID_ID``)
_ID_CHARACTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:-")
DEFAULT_CHAR_SET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


class RangeIdConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    char_set: str = Field(
        DEFAULT_CHAR_SET,
        min_length=2,
        max_length=256,
        description="Characters a range_id id is drawn from (letters, digits, '.', '_', ':', '-').",
    )
    length: int = Field(16, ge=8, le=128, description="Characters in a range_id id.")

    @model_validator(mode="after")
    def _usable(self) -> Self:
        outside = sorted(set(self.char_set) - _ID_CHARACTERS)
        if outside:
            raise ValueError(
                f"char_set must hold only letters, digits and '._:-' (an id must be kept when "
                f"it comes back); {outside[0]!r} is not one"
            )
        if len(set(self.char_set)) != len(self.char_set):
            raise ValueError("char_set must not repeat a character")
        return self


class RequestIdConfig(PluginConfig):
    header_name: str = Field(
        "X-Request-Id",
        pattern=HEADER_NAME,
        description="The header the id is read from, sent upstream in and returned in.",
    )
    include_in_response: bool = Field(
        True, description="Return the id to the client in header_name."
    )
    algorithm: Literal["uuid", "range_id"] = Field(
        "uuid",
        description="How an id is made for a request without a valid one: a random UUID, or "
        "range_id (length characters of char_set).",
    )
    range_id: RangeIdConfig = Field(
        default_factory=RangeIdConfig, description="The range_id algorithm's settings."
    )


PLUGIN = PluginSpec(
    name="request-id",
    category=Category.OBSERVABILITY,
    order=5,
    reorderable=False,
    config=RequestIdConfig,
    description="Sets the header the request id travels in (to the upstream and back to the "
    "client) and how new ids are made (uuid or range_id); a valid incoming id is kept. The "
    "id is the one logs and traces record.",
    consumer_scope=False,
)


class RequestIdRuntime(BasePluginRuntime):
    """No phase of its own: the route takes its policy when its chain is built, and the
    gateway applies it as soon as the request is routed (before any plugin runs)."""

    def __init__(self, config: RequestIdConfig, services: RuntimeServices) -> None:
        range_ids = None
        if config.algorithm == "range_id":
            range_ids = RangeIds(config.range_id.char_set, config.range_id.length)
        self.policy = RequestIdPolicy(
            config.header_name, config.include_in_response, range_ids, RequestIds()
        )

    def request_ids(self) -> RequestIdPolicy:
        return self.policy


PLUGIN = dataclasses.replace(PLUGIN, runtime=RequestIdRuntime)
