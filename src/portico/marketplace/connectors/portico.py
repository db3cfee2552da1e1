"""The ``portico`` connector: a Portico management service over HTTP, read with the token of
one of its service accounts (``psa_...``, best with the predefined Integration role).

The check lists one API of the organisation (``GET /api/orgs/{org_id}/apis?size=1``): it
proves the address, the token, the organisation and the ``api.read`` permission imports
need, for the price of one small read.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from portico.marketplace.connectors.base import (
    ConnectionField,
    Connector,
    ConnectorError,
    Outbound,
    capabilities,
)

#: what can travel as a bearer token (RFC 6750's b64token, loosely: visible ASCII)
_TOKEN = re.compile(r"[\x21-\x7e]+")


class PorticoConnector(Connector):
    id = "portico"
    label = "Portico management service"
    description = "APIs and products of an organisation of a Portico management service."
    capabilities = capabilities(apis=True, products=True, remote_inventory=True, async_import=True)
    connection_fields = (
        ConnectionField(
            "base_url",
            "Base URL",
            "url",
            help="Where the management service answers, e.g. https://portico.example.com.",
        ),
        ConnectionField(
            "org_id", "Organisation id", "string", help="The id (a UUID) of the organisation."
        ),
        ConnectionField(
            "token",
            "Service-account token",
            "string",
            secret=True,
            help="The token of a service account of that organisation (psa_...), with the "
            "Integration role or another that grants api.read and product.read.",
        ),
    )
    feature_flag = "gateway_sync.source.portico"

    async def check(self, config: Mapping[str, Any], outbound: Outbound) -> None:
        try:
            org_id = uuid.UUID(str(config["org_id"]))
        except ValueError:
            raise ConnectorError("org_id: an organisation id (a UUID)", field="org_id") from None
        token = str(config["token"])
        if not _TOKEN.fullmatch(token):
            raise ConnectorError(
                "token: a service-account token is printable ASCII without spaces (psa_...)",
                field="token",
            )
        base = str(config["base_url"]).rstrip("/")
        url = f"{base}/api/orgs/{quote(str(org_id))}/apis?size=1"
        response, _ = await outbound.get(
            url, headers={"Authorization": f"Bearer {token}"}, config_field="base_url"
        )
        status = response.status_code
        if status == 200:
            return
        if status == 401:
            raise ConnectorError(
                "the management service refused the token (unknown, revoked or expired)",
                field="token",
            )
        if status == 403:
            raise ConnectorError(
                "the token's service account may not read the organisation's APIs "
                "(it needs api.read: give it the Integration role)",
                field="token",
            )
        if status == 404:
            raise ConnectorError(
                f"no organisation {org_id} is visible to this token at {base} (wrong "
                "organisation id, a token of another organisation, or not a Portico "
                "management service)",
                field="org_id",
            )
        raise ConnectorError(
            f"the management service at {base} answered {status}", field="base_url"
        )


CONNECTOR = PorticoConnector()
