from __future__ import annotations

import uuid
from collections.abc import Collection
from dataclasses import dataclass

from sqlalchemy import ColumnElement, Select, func, select

from portico.core.db.repository import Repository
from portico.marketplace.feature.models import Feature, FeatureOverride
from portico.marketplace.organisation.models import Organisation


@dataclass(frozen=True)
class FeatureFilters:
    enabled: bool | None = None
    installed: bool | None = None


class FeatureRepository(Repository[Feature]):
    model = Feature
    sort_columns = {
        "key": Feature.key,
        "label": Feature.label,
        "created_at": Feature.created_at,
        "updated_at": Feature.updated_at,
    }

    async def by_key(self, key: str) -> Feature | None:
        return await self.first(select(Feature).where(Feature.key == key))

    async def every(self) -> list[Feature]:
        return await self.all(select(Feature).order_by(Feature.key))

    def matching(
        self, filters: FeatureFilters, *, organisation_id: uuid.UUID | None = None
    ) -> Select[Feature]:
        """The features that pass ``filters``; ``enabled`` is the platform state, or the
        organisation's effective one when ``organisation_id`` is given."""
        statement = select(Feature)
        if filters.installed is not None:
            installed = Feature.removed_at.is_(None)
            statement = statement.where(installed if filters.installed else ~installed)
        if filters.enabled is not None:
            state = Feature.enabled if organisation_id is None else self._effective(organisation_id)
            statement = statement.where(state == filters.enabled)
        return statement

    @staticmethod
    def _effective(organisation_id: uuid.UUID) -> ColumnElement[bool]:
        override = (
            select(FeatureOverride.enabled)
            .where(
                FeatureOverride.organisation_id == organisation_id,
                FeatureOverride.feature_id == Feature.id,
            )
            .scalar_subquery()
        )
        return func.coalesce(override, Feature.enabled)

    async def enabled_for(self, key: str, organisation_id: uuid.UUID | None) -> bool | None:
        """The effective state of ``key`` (for the organisation when one is given, else the
        platform's) in one query; None when the registry does not hold it."""
        state = Feature.enabled if organisation_id is None else self._effective(organisation_id)
        found: bool | None = await self.session.scalar(select(state).where(Feature.key == key))
        return found


class FeatureOverrideRepository(Repository[FeatureOverride]):
    model = FeatureOverride

    async def of(self, organisation_id: uuid.UUID, feature_id: uuid.UUID) -> FeatureOverride | None:
        return await self.first(
            select(FeatureOverride).where(
                FeatureOverride.organisation_id == organisation_id,
                FeatureOverride.feature_id == feature_id,
            )
        )

    async def for_features(
        self, organisation_id: uuid.UUID, feature_ids: Collection[uuid.UUID]
    ) -> dict[uuid.UUID, FeatureOverride]:
        if not feature_ids:
            return {}
        rows = await self.all(
            select(FeatureOverride).where(
                FeatureOverride.organisation_id == organisation_id,
                FeatureOverride.feature_id.in_(list(feature_ids)),
            )
        )
        return {row.feature_id: row for row in rows}

    async def organisation(self, organisation_id: uuid.UUID) -> Organisation | None:
        found: Organisation | None = await self.session.get(Organisation, organisation_id)
        return found
