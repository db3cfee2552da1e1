"""The failures of imports that are theirs alone."""

from __future__ import annotations

from portico.core.errors import Conflict, NotFound, PorticoError


class RemoteFailed(PorticoError):
    status = 502
    kind = "gateway-connection-failed"
    title = "Gateway Connection Failed"
    default_detail = "The gateway connection's remote side could not be read."
    description = (
        "The request needed the remote side of a gateway connection (its inventory, an API's "
        "document, its products) and could not read it: unreachable, an answer 5xx after a "
        "few attempts, credentials refused, an answer that is not what the connector "
        "expects, or an address the SSRF guard refuses. `detail` names the connection (its "
        "name and id) and says why; the connection's status is now `failing`. Nothing was "
        "imported. Fix the remote side or the connection (PUT it with working settings), "
        "then try again."
    )


class RemoteApiNotFound(NotFound):
    default_detail = "the gateway connection exposes no API with this api_id"


class RemoteProductNotFound(NotFound):
    default_detail = "the gateway connection exposes no product with this product_id"


class SourceWithoutProducts(Conflict):
    kind = "source-without-products"
    title = "Source Without Products"
    default_detail = "The connection's source type has no products."
    description = (
        "Products were asked of a gateway connection whose source type has none (its "
        "`products` capability is false, as `GET /sources/{source}` shows: an `openapi` "
        "connection lists documents, not products). The connection is valid, its source "
        "just cannot answer this; import its APIs instead."
    )
