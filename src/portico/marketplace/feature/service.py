"""Portal features: the registry synced from the installed modules, the platform state and
the organisations' overrides. The effective state of a feature for an organisation is its
override when one is set, else the platform's; a feature the registry does not hold yet (its
module installed since the last sync) is on.

Every change is audited on the marketplace surface: ``feature.add``, ``feature.remove``,
``feature.restore`` (a sync), ``feature.update`` (platform state or settings) and
``feature_override.set`` / ``feature_override.clear`` (entity: the organisation).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from pydantic import ValidationError
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from portico.core import audit
from portico.core.audit import Actor
from portico.core.errors import Conflict, NotFound, ValidationFailed
from portico.core.filter_values import FilterValues
from portico.core.pagination import ListQuery, Page
from portico.core.validation import translate
from portico.marketplace import SURFACE
from portico.marketplace.feature.models import Feature, FeatureOverride
from portico.marketplace.feature.registry import DeclaredFeature, declared
from portico.marketplace.feature.repository import (
    FeatureFilters,
    FeatureOverrideRepository,
    FeatureRepository,
)
from portico.marketplace.feature.schemas import (
    FeatureRead,
    FeatureUpdate,
    OrganisationFeatureRead,
    SyncReport,
)
from portico.marketplace.modules import Module

MODULE = "features"


class FeatureNotFound(NotFound):
    default_detail = "feature not found"


class OrganisationNotFound(NotFound):
    default_detail = "organisation not found"


class FeatureAlwaysOn(Conflict):
    default_detail = "this feature can never be switched off"


# ------------------------------------------------------------------ reading


async def list_(
    *, session: AsyncSession, query: ListQuery, modules: Sequence[Module]
) -> tuple[Page[Feature], list[FeatureRead]]:
    repository = FeatureRepository(session)
    page = await repository.page(repository.matching(_filters(query.filters)), query)
    features = declared(modules)
    return page, [FeatureRead.of(f, _installed(f, features)) for f in page.items]


async def get(*, session: AsyncSession, key: str) -> Feature:
    feature = await FeatureRepository(session).by_key(key)
    if feature is None:
        raise FeatureNotFound(f"no feature '{key}' (POST /features/sync registers new ones)")
    return feature


def read(feature: Feature, modules: Sequence[Module]) -> FeatureRead:
    return FeatureRead.of(feature, _installed(feature, declared(modules)))


async def is_enabled(
    session: AsyncSession, key: str, *, organisation_id: uuid.UUID | None = None
) -> bool:
    """Whether ``key`` is on: for the organisation when one is given (its override, else
    the platform's state), else platform-wide. Unregistered features are on."""
    state = await FeatureRepository(session).enabled_for(key, organisation_id)
    return True if state is None else state


async def notice(session: AsyncSession, key: str) -> str | None:
    """The notice the feature's settings give for its endpoints while it is off."""
    feature = await FeatureRepository(session).by_key(key)
    value = feature.config.get("disabled_notice") if feature is not None else None
    return value if isinstance(value, str) else None


# ------------------------------------------------------------------ the registry


async def sync(
    *, session: AsyncSession, actor: Actor, modules: Sequence[Module], now: datetime
) -> SyncReport:
    """Register the features of installed modules that have none (on, no settings), mark
    removed those whose module is gone, and restore those whose module is back."""
    features = declared(modules)
    repository = FeatureRepository(session)
    added: list[str] = []
    removed: list[str] = []
    restored: list[str] = []
    registered = {f.key: f for f in await repository.every()}
    for key, feature in features.items():
        if key not in registered:
            row = Feature(id=uuid.uuid4(), key=key, label=feature.label, enabled=True, config={})
            try:
                # a savepoint: two processes starting at once (bootstrap syncs) may both
                # register it; the one that loses takes the winner's row
                async with session.begin_nested():
                    await repository.add(row)
            except IntegrityError:
                concurrent = await repository.by_key(key)
                if concurrent is None:
                    raise
                registered[key] = concurrent
                continue
            registered[key] = row
            added.append(key)
            await _audit(session, actor, "feature.add", row, features)
    for key, row in registered.items():
        if key in features and row.label != features[key].label:
            row.label = features[key].label  # a module renamed in a new version
        if key in features and row.removed_at is not None:
            before = _snapshot(row, features)
            row.removed_at = None
            row.updated_at = now
            restored.append(key)
            await _audit(session, actor, "feature.restore", row, features, before=before)
        elif key not in features and row.removed_at is None:
            before = _snapshot(row, features)
            row.removed_at = now
            row.updated_at = now
            removed.append(key)
            await _audit(session, actor, "feature.remove", row, features, before=before)
    await session.flush()
    return SyncReport(
        added=added,
        removed=removed,
        restored=restored,
        features=[
            FeatureRead.of(row, _installed(row, features)) for _, row in sorted(registered.items())
        ],
    )


async def update(
    *,
    session: AsyncSession,
    actor: Actor,
    key: str,
    data: FeatureUpdate,
    modules: Sequence[Module],
    now: datetime,
) -> Feature:
    """Switch a feature on or off platform-wide, or replace its settings. A feature whose
    module is removed can be changed too: its state waits for the module's return."""
    feature = await get(session=session, key=key)
    features = declared(modules)
    found = _installed(feature, features)
    config = None if data.config is None else _valid_config(found, data.config)
    if data.enabled is False and found is not None and not found.switchable:
        raise FeatureAlwaysOn(f"feature '{key}' can never be switched off: {found.always_on}")
    before = _snapshot(feature, features)
    if data.enabled is not None:
        feature.enabled = data.enabled
    if config is not None:
        feature.config = config
    if _snapshot(feature, features) != before:
        feature.updated_at = now
        await _audit(session, actor, "feature.update", feature, features, before=before)
    await session.flush()
    return feature


# ------------------------------------------------------------------ organisations


async def organisation_features(
    *, session: AsyncSession, organisation_id: uuid.UUID, query: ListQuery
) -> tuple[Page[Feature], list[OrganisationFeatureRead]]:
    await _organisation(session, organisation_id)
    repository = FeatureRepository(session)
    statement = repository.matching(_filters(query.filters), organisation_id=organisation_id)
    page = await repository.page(statement, query)
    overrides = await FeatureOverrideRepository(session).for_features(
        organisation_id, [f.id for f in page.items]
    )
    return page, [_effective(f, overrides.get(f.id)) for f in page.items]


async def set_override(
    *,
    session: AsyncSession,
    actor: Actor,
    organisation_id: uuid.UUID,
    key: str,
    enabled: bool | None,
    modules: Sequence[Module],
) -> OrganisationFeatureRead:
    """Set the organisation's own state of a feature, or clear it (``enabled`` None)."""
    organisation = await _organisation(session, organisation_id)
    feature = await get(session=session, key=key)
    found = _installed(feature, declared(modules))
    if enabled is False and found is not None and not found.switchable:
        raise FeatureAlwaysOn(f"feature '{key}' can never be switched off: {found.always_on}")
    overrides = FeatureOverrideRepository(session)
    current = await overrides.of(organisation_id, feature.id)
    before = _effective(feature, current).model_dump(mode="json")
    if enabled is None:
        if current is None:
            return _effective(feature, None)  # nothing to clear: nothing changes
        await overrides.delete(current)
        current = None
        operation, verb = "feature_override.clear", "cleared"
    else:
        if current is not None and current.enabled == enabled:
            return _effective(feature, current)
        if current is None:
            current = await overrides.add(
                FeatureOverride(
                    id=uuid.uuid4(),
                    organisation_id=organisation_id,
                    feature_id=feature.id,
                    enabled=enabled,
                )
            )
        else:
            current.enabled = enabled
            await session.flush()
        operation, verb = "feature_override.set", "set"
    result = _effective(feature, current)
    state = "" if enabled is None else (" on" if enabled else " off")
    await audit.record(
        session,
        actor,
        action=operation,
        entity_type="organisation",
        entity_id=organisation_id,
        before=before,
        after=result.model_dump(mode="json"),
        summary=f"{verb} the override of feature {key}{state} for organisation {organisation.name}",
        surface=SURFACE,
        module=MODULE,
    )
    return result


# ------------------------------------------------------------------ helpers


def _installed(feature: Feature, features: Mapping[str, DeclaredFeature]) -> DeclaredFeature | None:
    return features.get(feature.key) if feature.removed_at is None else None


def _valid_config(found: DeclaredFeature | None, config: dict[str, Any]) -> dict[str, Any]:
    """``config`` checked against the feature's settings; refusals point at
    ``/config/<field>``. A removed feature's settings cannot be checked: refused."""
    if found is None:
        raise ValidationFailed.at(
            "/config", "the feature's module is not installed: its settings cannot be checked"
        )
    if found.settings is None:
        if config:
            raise ValidationFailed.at("/config", f"feature '{found.key}' takes no settings")
        return {}
    try:
        valid = found.settings.model_validate(config)
    except ValidationError as refused:
        raise ValidationFailed(
            translate({**e, "loc": ("config", *e["loc"])} for e in refused.errors())
        ) from None
    return valid.model_dump(mode="json", exclude_none=True)


async def _organisation(session: AsyncSession, organisation_id: uuid.UUID) -> Any:
    organisation = await FeatureOverrideRepository(session).organisation(organisation_id)
    if organisation is None:
        raise OrganisationNotFound()
    return organisation


def _effective(feature: Feature, override: FeatureOverride | None) -> OrganisationFeatureRead:
    return OrganisationFeatureRead.of(feature, None if override is None else override.enabled)


def _snapshot(feature: Feature, features: Mapping[str, DeclaredFeature]) -> dict[str, Any]:
    snapshot = FeatureRead.of(feature, _installed(feature, features)).model_dump(mode="json")
    snapshot.pop("updated_at")  # when is the entry's own time; the snapshot says what
    snapshot.pop("settings_schema")
    return snapshot


_DONE = {"add": "registered", "remove": "marked removed", "restore": "restored"}


async def _audit(
    session: AsyncSession,
    actor: Actor,
    operation: str,
    feature: Feature,
    features: Mapping[str, DeclaredFeature],
    *,
    before: dict[str, Any] | None = None,
) -> None:
    """One entry per feature changed (``actor``, not a SiteCaller: bootstrap syncs too)."""
    verb = operation.partition(".")[2]
    await audit.record(
        session,
        actor,
        action=operation,
        entity_type="feature",
        entity_id=feature.key,
        before=before,
        after=_snapshot(feature, features),
        summary=f"{_DONE.get(verb, verb + 'd')} feature {feature.key}",
        surface=SURFACE,
        module=MODULE,
    )


def _filters(raw: Mapping[str, str]) -> FeatureFilters:
    values = FilterValues(raw)
    enabled = values.boolean("enabled")
    installed = values.boolean("installed")
    values.check()
    return FeatureFilters(enabled=enabled, installed=installed)
