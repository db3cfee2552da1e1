"""What the installed modules declare as features: one per module (``modules.py``), keyed
by the module's name, labelled with its label.

Settings: a feature that can be switched off takes :class:`SwitchableSettings` (the notice
its endpoints give while it is off); one that is always on has no settings, so its
``config`` stays ``{}``. A module that grows settings of its own declares them here, as a
strict model extending :class:`SwitchableSettings`, in ``SETTINGS``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from portico.marketplace.modules import Module

#: the longest notice a feature's endpoints give while it is off
MAX_NOTICE = 500


class SwitchableSettings(BaseModel):
    """The settings every feature that can be switched off takes."""

    model_config = ConfigDict(extra="forbid", strict=True, title="FeatureSettings")

    disabled_notice: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_NOTICE,
        description="Said by the feature's endpoints while it is off, after the problem's "
        "own words (e.g. when it comes back, or where to go instead).",
    )


#: module name → its own settings model, for modules that have more than the notice
SETTINGS: dict[str, type[SwitchableSettings]] = {}


@dataclass(frozen=True)
class DeclaredFeature:
    key: str
    label: str
    #: why it can never be switched off; None when it can
    always_on: str | None
    #: the model its ``config`` must satisfy; None: it takes no settings (``{}`` only)
    settings: type[BaseModel] | None

    @property
    def switchable(self) -> bool:
        return self.always_on is None


def feature_of(module: Module) -> DeclaredFeature:
    settings = None if module.always_on else SETTINGS.get(module.name, SwitchableSettings)
    return DeclaredFeature(module.name, module.label, module.always_on, settings)


def declared(modules: Iterable[Module]) -> dict[str, DeclaredFeature]:
    """The installed modules' features by key, in the modules' order."""
    return {module.name: feature_of(module) for module in modules}
