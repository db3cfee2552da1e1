"""HTTP shapes of API health (snake_case, read only)."""

from __future__ import annotations

import uuid
from datetime import datetime

from pydantic import BaseModel, Field

from portico.core.envelope import CollectionLinks, CollectionMeta
from portico.core.schema import PlainReadSchema
from portico.marketplace.health.models import ApiHealthCheck, CheckTrigger, HealthStatus
from portico.marketplace.node.models import CatalogueNode


class ApiRef(PlainReadSchema):
    id: uuid.UUID
    title: str
    version: str
    organisation: uuid.UUID | None = Field(description="The owning portal organisation's id.")
    published: bool

    @classmethod
    def of(cls, node: CatalogueNode) -> ApiRef:
        return cls(
            id=node.id,
            title=node.title,
            version=node.version,
            organisation=node.organisation_id,
            published=node.published,
        )


class CheckRead(PlainReadSchema):
    id: uuid.UUID
    checked_at: datetime
    trigger: CheckTrigger = Field(description="scheduled, or manual (POST .../check).")
    status: HealthStatus
    url: str | None = Field(description="The health URL called; null when there is none.")
    http_status: int | None = Field(description="The answer's status; null without one.")
    latency_ms: float | None = Field(description="Milliseconds to the answer's end.")
    detail: str | None = Field(description="Why it is not up; null when it is.")

    @classmethod
    def of(cls, check: ApiHealthCheck) -> CheckRead:
        return cls.model_validate(check)


class HealthRow(PlainReadSchema):
    api: ApiRef
    status: HealthStatus = Field(description="The latest check's; unknown before the first.")
    last_check: CheckRead | None


class StatusCounts(PlainReadSchema):
    up: int
    degraded: int
    down: int
    unknown: int = Field(description="Never checked, no health URL, or refused by the guard.")


class DashboardMeta(CollectionMeta):
    status_counts: StatusCounts = Field(
        description="Published APIs per status, over every page (the filters on "
        "organisation apply, the one on status does not)."
    )


class HealthDashboard(BaseModel):
    data: list[HealthRow]
    meta: DashboardMeta
    links: CollectionLinks


class HealthRecord(PlainReadSchema):
    api: ApiRef
    status: HealthStatus = Field(description="The latest check's; unknown before the first.")
    health_url: str | None = Field(
        description="The URL a check calls now (x-health-url, or the first server and the "
        "health path); null when the document gives none."
    )
    health_url_source: str = Field(description="How the URL was found, or why there is none.")
    last_check: CheckRead | None
    recent_checks: list[CheckRead] = Field(description="The latest 20 checks, newest first.")
