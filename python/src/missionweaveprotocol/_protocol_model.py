"""``ProtocolModel``: the pydantic v2 base of the reference's protocol models, and the glue that
lets a model's validator hand its protocol rules to the Rust core.

Same configuration as the reference (camelCase aliases, ``extra="forbid"``, population by
field name, ``validate_assignment=True``), with two deliberate differences:

- **No silent whitespace stripping.** The reference sets ``str_strip_whitespace=True``, so
  ``" urn:lease:1 "`` silently became another identifier (reference gap §7.18). Here strings are
  kept as given and the core refuses what is invalid.
- **A refused assignment leaves the model unchanged.** pydantic applies an assignment before
  the model validators run, so in the reference a refused ``model.field = value`` raises but
  keeps the refused value. Here the previous state is restored before the error propagates.

Importing this module imports pydantic; the package root never does (submodules load lazily).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, NoReturn, Optional

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

from .errors import MissionWeaveError


class ProtocolModel(BaseModel):
    """Base of the protocol's pydantic models (camelCase aliases, extra members forbidden)."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        extra="forbid",
        populate_by_name=True,
        validate_assignment=True,
    )

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in type(self).model_fields:
            super().__setattr__(name, value)
            return
        saved = dict(self.__dict__)
        fields_set = set(self.__pydantic_fields_set__)
        try:
            super().__setattr__(name, value)
        except ValidationError:
            object.__setattr__(self, "__dict__", saved)
            object.__setattr__(self, "__pydantic_fields_set__", fields_set)
            raise


def core_refusal(error: MissionWeaveError) -> NoReturn:
    """Re-raises a core refusal inside a validator as a pydantic error: its ``type`` is the §19
    wire code, its message ``"<code>: <detail>"``, its context ``code``, ``reason`` (the core's
    stable reason slug), ``detail`` and ``kind``."""
    code = str(error.code)
    detail = error.detail if error.detail is not None else str(error)
    kind = getattr(error, "kind", None)
    raise PydanticCustomError(
        code,
        "{code}: {detail}",
        {
            "code": code,
            "reason": error.reason,
            "detail": detail,
            "kind": None if kind is None else str(kind),
        },
    ) from error


def invalid(code: str, reason: str, detail: str) -> NoReturn:
    """A refusal found before the core is reached (for example an unrenderable instant)."""
    raise PydanticCustomError(
        code, "{code}: {detail}", {"code": code, "reason": reason, "detail": detail, "kind": None}
    )


def floor_millis(value: datetime) -> datetime:
    """The core keeps instants to the millisecond; finer parts are floored (documented in each
    model's docstring)."""
    return value.replace(microsecond=value.microsecond - value.microsecond % 1000)


def render_instant(value: datetime) -> str:
    """An aware datetime in the protocol's timestamp profile (UTC, millisecond fraction), by
    the core's one renderer (``fraction="millis"``)."""
    from . import _native
    from .errors import InvalidInputError

    try:
        return _native.render_instant(value, fraction="millis")
    except InvalidInputError as error:
        invalid("INVALID_COMMAND", "unrenderable_timestamp", str(error))


def render_optional(value: Optional[datetime]) -> Optional[str]:
    return None if value is None else render_instant(value)


def reject_bool(value: Any) -> Any:
    """pydantic's lax ``int`` turns ``True`` into ``1``; an epoch or counter never is a bool."""
    if isinstance(value, bool):
        raise PydanticCustomError("int_type", "Input should be a valid integer, not a bool")
    return value


__all__ = [
    "ProtocolModel",
    "core_refusal",
    "floor_millis",
    "invalid",
    "reject_bool",
    "render_instant",
    "render_optional",
]
