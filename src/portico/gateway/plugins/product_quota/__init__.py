"""product-quota: enforce the quota of the API product an app subscribed to.

The quota itself (``limit`` per ``interval`` ``interval_unit``, a fixed calendar window,
``-1`` for unlimited) belongs to the product and reaches the gateway in the environment's
snapshot; the attachment only says what happens when the counters cannot be reached. Where
counters live is the node's configuration (``PORTICO_REDIS_URL``): with more than one node it
must be Redis, so that the nodes together admit exactly the limit.

Its configuration is in ``config``; its per-request work, compiled with the data plane
(``portico.native``), in ``runtime``.
"""

from portico import native

# the compiled build first, when current: see CONVENTIONS.md "Compiled modules"
__path__ = native.package_path(__name__, __path__)

from portico.gateway.plugins.base import Category, PluginSpec
from portico.gateway.plugins.product_quota.config import ProductQuotaConfig
from portico.gateway.plugins.product_quota.runtime import ProductQuotaRuntime

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
    runtime=ProductQuotaRuntime,
)
