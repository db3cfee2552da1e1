"""HTTP shapes of gateway imports (snake_case): the remote inventory, the nodes imported,
the bodies of the imports and their per-item reports."""

from __future__ import annotations

from typing import Annotated, Any, Literal
from uuid import UUID

from pydantic import Field

from portico.core.schema import PlainReadSchema, PlainWriteSchema
from portico.marketplace.connectors.base import RemoteApi, RemoteProduct

ImportStatus = Literal["new", "existing"]
Outcome = Literal["created", "updated", "failed"]
#: an id on the remote side, as the inventory lists it
RemoteId = Annotated[str, Field(min_length=1, max_length=255)]
#: the most ids one import names
MAX_IDS = 1000


# ------------------------------------------------------------------ the remote inventory


class RemoteApiRead(PlainReadSchema):
    api_id: str = Field(description="Its id on the connection: what an import names.")
    uuid: str | None = Field(description="The remote side's own identifier, when it has one.")
    title: str
    overview: str
    version: str = Field(description="Empty when the listing does not tell it.")
    revision: str | None = Field(
        description="The remote revision, when the listing tells it (an import records it)."
    )
    problem: str | None = Field(
        description="Why it cannot be imported as it stands (a document that cannot be "
        "read), or null."
    )
    imported: bool = Field(description="Whether a node was imported from it.")
    node_id: UUID | None = Field(description="That node's id.")
    import_status: ImportStatus = Field(
        description="new (never imported) or existing (importing it updates its node)."
    )

    @classmethod
    def of(cls, api: RemoteApi, node_id: UUID | None) -> RemoteApiRead:
        return cls(
            api_id=api.api_id,
            uuid=api.uuid,
            title=api.title,
            overview=api.overview,
            version=api.version,
            revision=api.revision,
            problem=api.problem,
            imported=node_id is not None,
            node_id=node_id,
            import_status="existing" if node_id is not None else "new",
        )


class RemoteProductRead(PlainReadSchema):
    product_id: str = Field(description="Its id on the connection: what an import names.")
    uuid: str | None
    title: str
    description: str
    quota: dict[str, Any] | None = Field(description="As the remote gateway enforces it.")
    api_ids: list[str] = Field(description="The api_id of each of its APIs, in its order.")
    imported: bool
    node_id: UUID | None
    import_status: ImportStatus

    @classmethod
    def of(cls, product: RemoteProduct, node_id: UUID | None) -> RemoteProductRead:
        return cls(
            product_id=product.product_id,
            uuid=product.uuid,
            title=product.title,
            description=product.description,
            quota=product.quota,
            api_ids=list(product.api_ids),
            imported=node_id is not None,
            node_id=node_id,
            import_status="existing" if node_id is not None else "new",
        )


# ------------------------------------------------------------------ bodies


class ApiImport(PlainWriteSchema):
    api_id: RemoteId = Field(description="The API's api_id in the remote inventory.")


class ApiImportAll(PlainWriteSchema):
    api_ids: list[RemoteId] | None = Field(
        None,
        min_length=1,
        max_length=MAX_IDS,
        description="Only these (each an api_id of the remote inventory); every API when absent.",
    )


class ProductImport(PlainWriteSchema):
    product_id: RemoteId = Field(description="The product's product_id in the remote inventory.")


class ProductImportAll(PlainWriteSchema):
    product_ids: list[RemoteId] | None = Field(
        None,
        min_length=1,
        max_length=MAX_IDS,
        description="Only these (each a product_id of the remote inventory); every product "
        "when absent.",
    )


class JobStart(PlainWriteSchema):
    kind: Literal["import-apis"] = Field(
        description="What the job does: import-apis imports the connection's APIs (all, or "
        "those of api_ids) in batches, reporting progress."
    )
    api_ids: list[RemoteId] | None = Field(
        None,
        min_length=1,
        max_length=MAX_IDS,
        description="Only these api_ids; every API of the remote inventory when absent.",
    )


# ------------------------------------------------------------------ reports


class ApiImportOutcome(PlainReadSchema):
    api_id: str
    node_id: UUID | None = Field(description="The node written; null when it failed.")
    outcome: Outcome
    detail: str | None = Field(description="Why it failed; null otherwise.")


class ProductImportOutcome(PlainReadSchema):
    product_id: str
    node_id: UUID | None = Field(description="The node written; null when it failed.")
    outcome: Outcome
    detail: str | None = Field(description="Why it failed; null otherwise.")
    imported_apis: list[str] = Field(
        description="The api_ids of its APIs imported with it (those not imported before)."
    )
