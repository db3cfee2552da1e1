"""limit-count: at most ``count`` requests per ``time_window`` seconds per key.

Counters are local to the gateway process, or shared in Redis (atomically) so that N workers
together admit exactly ``count``. The key rules (``limit_key``, ``limit_scope``, in ``runtime``;
their checks in ``config``) and the Redis URL type are shared with limit-req and product-quota.

Its configuration is in ``config``; its per-request work, compiled with the data plane
(``portico.native``), in ``runtime``.
"""

from portico import native

# the compiled build first, when current: see CONVENTIONS.md "Compiled modules"
__path__ = native.package_path(__name__, __path__)

from portico.gateway.plugins.base import Category, PluginSpec
from portico.gateway.plugins.limit_count.config import LimitCountConfig
from portico.gateway.plugins.limit_count.runtime import LimitCountRuntime

PLUGIN = PluginSpec(
    name="limit-count",
    category=Category.TRAFFIC,
    order=210,
    reorderable=True,
    config=LimitCountConfig,
    description="Admits `count` requests per `time_window` seconds per key, counted locally or "
    "in Redis; others get `rejected_code` (503). Adds X-RateLimit-* headers.",
    runtime=LimitCountRuntime,
)
