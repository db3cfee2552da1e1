"""HTTP shapes of source types (snake_case, read only)."""

from __future__ import annotations

from pydantic import Field

from portico.core.schema import PlainReadSchema
from portico.marketplace.connectors.base import Connector, FieldType


class Capabilities(PlainReadSchema):
    apis: bool = Field(description="Imports APIs.")
    products: bool = Field(description="Imports API products.")
    remote_inventory: bool = Field(description="Lists what the remote side exposes.")
    async_import: bool = Field(description="Imports in a background job.")
    analytics: bool = Field(description="Reads traffic analytics.")
    subscription_provisioning: bool = Field(description="Provisions subscriptions remotely.")
    health: bool = Field(description="Reports the remote side's health.")


class ConnectionFieldRead(PlainReadSchema):
    name: str = Field(description="The key of the field in a connection's `config`.")
    label: str
    type: FieldType = Field(
        description="string: a text; url: an absolute http(s) URL; url_list: a list of them."
    )
    required: bool
    secret: bool = Field(description="Write-only: stored encrypted, never returned.")
    help: str


class FeatureFlag(PlainReadSchema):
    name: str
    enabled: bool


class SourceRead(PlainReadSchema):
    id: str = Field(description="The `{source}` of paths and the `source` of connections.")
    label: str
    description: str
    capabilities: Capabilities
    connection_fields: list[ConnectionFieldRead]
    feature_flag: FeatureFlag

    @classmethod
    def of(cls, connector: Connector) -> SourceRead:
        return cls(
            id=connector.id,
            label=connector.label,
            description=connector.description,
            capabilities=Capabilities(**connector.capabilities),
            connection_fields=[
                ConnectionFieldRead(
                    name=f.name,
                    label=f.label,
                    type=f.type,
                    required=f.required,
                    secret=f.secret,
                    help=f.help,
                )
                for f in connector.connection_fields
            ],
            # no flag store yet: every known source type is on
            feature_flag=FeatureFlag(name=connector.feature_flag, enabled=True),
        )
