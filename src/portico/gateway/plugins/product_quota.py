"""product-quota: enforce the quota of the API product an app subscribed to.

The quota itself (``limit`` per ``interval`` ``interval_unit``, a fixed calendar window,
``-1`` for unlimited) belongs to the product and reaches the gateway in the environment's
snapshot; the attachment only says what happens when the counters cannot be reached. Where
counters live is the node's configuration (``PORTICO_REDIS_URL``): with more than one node it
must be Redis, so that the nodes together admit exactly the limit.
"""

from __future__ import annotations

import dataclasses
from typing import Literal

from pydantic import Field

from portico.gateway.plugins.base import Category, PluginConfig, PluginSpec
from portico.gateway.plugins.product_quota_runtime import ProductQuotaRuntime


class ProductQuotaConfig(PluginConfig):
    error_policy: Literal["fail_close", "fail_open"] = Field(
        "fail_close",
        description="When the counter store is unreachable: refuse with 503 (fail_close) or "
        "admit the request unmetered (fail_open).",
    )


PLUGIN = PluginSpec(
    name="product-quota",
    category=Category.TRAFFIC,
    order=230,
    reorderable=True,
    config=ProductQuotaConfig,
    description="Meters each request against the quota of the calling app's lowest-ranked "
    "product that covers the API and is deployed in the environment (per app, or per "
    'developer with key_scope developer; fixed calendar windows). Used up → 429 {"error":'
    '"quota exceeded"}; no covering product → 403; runs after authentication.',
)

PLUGIN = dataclasses.replace(PLUGIN, runtime=ProductQuotaRuntime)
