"""Dependency inversion between packages that must not import each other.

A package that needs an answer only a package above it can give (building an environment's
snapshot reads every domain; "is this upstream deployed?" is known where deployments are
joined to APIs) declares a :class:`Port`: what it needs, typed as a callable. It calls the
port like a function and never imports the package that answers. That package provides the
implementation when it is imported (``PORT.provide(implementation)``, at the end of the
module that implements it); the composition root imports every package
(``portico.management.routes``), so every port is provided before a request runs. Calling a
port that nothing provides is a wiring bug, reported as one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


class Port(Generic[P, R]):
    def __init__(self, purpose: str) -> None:
        self.purpose = purpose
        self._provider: Callable[P, R] | None = None

    def provide(self, provider: Callable[P, R]) -> Callable[P, R]:
        """Answer the port with ``provider`` (a function, or a class whose instances
        implement the port's protocol); returns it, so it can decorate a function."""
        self._provider = provider
        return provider

    @property
    def provided(self) -> bool:
        return self._provider is not None

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        provider = self._provider
        if provider is None:
            raise RuntimeError(f"nothing provides {self.purpose}: import the package that does")
        return provider(*args, **kwargs)
