"""Reading the values of a list's ``filter[<name>]`` parameters, alike on every list.

Which filter names a list accepts is checked before (``ListSpec``); their values are checked
here, each against what it must be, and every bad one is named in the same 400, worded one
way: ``filter[<name>]: must be <what>``.
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Mapping
from typing import TypeVar

from portico.core.errors import ValidationFailed

E = TypeVar("E", bound=enum.Enum)


class FilterValues:
    """The raw ``filter[...]`` values of a query; read each with the method for its kind,
    then :meth:`check`, which raises the refusals of all of them at once."""

    def __init__(self, raw: Mapping[str, str]) -> None:
        self.raw = raw
        self.errors: list[dict[str, str]] = []

    def refuse(self, name: str, expected: str) -> None:
        self.invalid(name, f"must be {expected}")

    def invalid(self, name: str, detail: str) -> None:
        """A refusal worded otherwise than what the value must be (``must not be empty``)."""
        parameter = f"filter[{name}]"
        self.errors.append({"parameter": parameter, "detail": f"{parameter}: {detail}"})

    def text(self, name: str) -> str | None:
        return self.raw.get(name)

    def choice(self, name: str, kind: type[E]) -> E | None:
        """One of the enumeration's values (the value, not the member's name)."""
        if name not in self.raw:
            return None
        for member in kind:
            if member.value == self.raw[name]:
                return member
        self.refuse(name, "one of " + ", ".join(str(m.value) for m in kind))
        return None

    def one_of(self, name: str, allowed: tuple[str, ...]) -> str | None:
        if name not in self.raw:
            return None
        if self.raw[name] in allowed:
            return self.raw[name]
        self.refuse(name, "one of " + ", ".join(allowed))
        return None

    def boolean(self, name: str) -> bool | None:
        if name not in self.raw:
            return None
        if self.raw[name] not in ("true", "false"):
            self.refuse(name, "true or false")
            return None
        return self.raw[name] == "true"

    def identifier(self, name: str, what: str = "a UUID") -> uuid.UUID | None:
        """A UUID; ``what`` says what it identifies, for the refusal."""
        if name not in self.raw:
            return None
        try:
            return uuid.UUID(self.raw[name])
        except ValueError:
            self.refuse(name, what)
            return None

    def check(self) -> None:
        if self.errors:
            raise ValidationFailed(self.errors)
