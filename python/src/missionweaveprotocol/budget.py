"""The hierarchical six-dimensional budget ledger (§12, §14).

Accounts form a tree: root Missions, their WorkItems (nested through ``parent_work_item_id``)
and child Missions promoted from a WorkItem. A child's limits are reserved against its parent
when registered, so the sum of direct children never exceeds the parent in any dimension. A
consumption is charged to the WorkItem and every ancestor atomically, or not at all
(:class:`BudgetLedgerError` with code ``BUDGET_EXCEEDED`` and ``dimension``). Every call walks
only the ancestry (the reference re-validated the whole ledger on each mutation). The rules run
in the Rust core; :class:`BudgetLedger` converts.

The snapshot is the reference's: frozen camelCase pydantic models :class:`BudgetLimitState`,
:class:`BudgetUsageState`, :class:`MissionBudgetState`, :class:`WorkItemBudgetState` and
:class:`BudgetLedgerSnapshot` (``schema_version=2``, ``missions``, ``work_items``,
``to_dict()``). Validating a :class:`BudgetLedgerSnapshot` rebuilds the ledger in the core
(duplicates, dangling or cross-Mission parents, cycles, currency conflicts, over-reservation and
inconsistent totals are refused) and a refusal is a :class:`pydantic.ValidationError` whose
error ``type`` is the wire code, with ``code``, ``reason``, ``detail`` and ``kind`` in ``ctx``.
``BudgetLedger.rebuild`` takes such a snapshot, its ``to_dict()`` form, or the core's own JSON
form (``{"version": 1, ...}``, as ``BudgetLedgerSnapshot.to_core_dict()`` gives).

Limits and deltas are :class:`ResourceUsage` (money in integer micro-units) or any object or
mapping with the six dimensions (``None`` = 0: an unset limit allows nothing, as in the
reference). Accounts are named by ``AccountRef = ("mission" | "work_item", id)``.

Differences from the reference, on purpose:

- A nonzero financial limit needs a ``currency`` (``register_mission(..., currency=...)``;
  child Missions inherit it): the reference's ledger had no currency, so money in two currencies
  could be added up. Snapshots carry each Mission's ``currency``.
- A child Mission is reserved against the WorkItem it was promoted from (§14):
  ``parent_mission_id`` alone is refused (``BudgetLedgerError``, kind ``parent``); given
  together with ``parent_work_item_id`` it must be that WorkItem's Mission.
- The legacy v1 snapshot (``schema_version=1``) is not read.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

from pydantic import ConfigDict, Field, ValidationInfo, field_validator, model_validator

from . import _native
from ._native import ResourceUsage
from ._protocol_model import ProtocolModel, core_refusal, invalid, reject_bool
from .errors import BudgetLedgerError, MissionWeaveError

AccountRef = Tuple[str, str]

DIMENSIONS = (
    "financial_microunits",
    "model_tokens",
    "tool_calls",
    "compute_seconds",
    "wall_clock_seconds",
    "external_actions",
)
_TRUSTED = "missionweaveprotocol.budget.trusted"


def _usage(value: Any, what: str) -> ResourceUsage:
    """A ``ResourceUsage`` from one, or from an object/mapping with the six dimensions."""
    if isinstance(value, ResourceUsage):
        return value
    if isinstance(value, (BudgetLimitState, BudgetUsageState)):
        return value.to_usage()
    if isinstance(value, Mapping):
        read = {name: value.get(name, value.get(_camel(name))) for name in DIMENSIONS}
    elif all(hasattr(value, name) for name in DIMENSIONS):
        read = {name: getattr(value, name) for name in DIMENSIONS}
    else:
        raise BudgetLedgerError(
            f"{what} must be a ResourceUsage or have the six dimensions, not {type(value).__name__}",
            kind="invalid_argument",
            code="INVALID_COMMAND",
        )
    return ResourceUsage(**{name: (0 if v is None else v) for name, v in read.items()})


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


class _FrozenModel(ProtocolModel):
    model_config = ConfigDict(frozen=True)


class BudgetLimitState(_FrozenModel):
    """Six limits; ``None`` allows nothing (the reference's convention)."""

    financial_microunits: Optional[int] = None
    model_tokens: Optional[int] = None
    tool_calls: Optional[int] = None
    compute_seconds: Optional[int] = None
    wall_clock_seconds: Optional[int] = None
    external_actions: Optional[int] = None

    @field_validator(*DIMENSIONS, mode="before")
    @classmethod
    def _no_bool(cls, value: Any) -> Any:
        return reject_bool(value)

    @classmethod
    def from_budget(cls, budget: Any) -> "BudgetLimitState":
        """From a ``ResourceUsage`` or any object/mapping with the six dimensions."""
        usage = _usage(budget, "budget")
        return cls(**{name: getattr(usage, name) for name in DIMENSIONS})

    def to_budget(self) -> ResourceUsage:
        """As the core's ``ResourceUsage`` (``None`` → 0)."""
        return self.to_usage()

    def to_usage(self) -> ResourceUsage:
        return ResourceUsage(**{name: getattr(self, name) or 0 for name in DIMENSIONS})


class BudgetUsageState(_FrozenModel):
    """Six amounts used."""

    financial_microunits: int = 0
    model_tokens: int = 0
    tool_calls: int = 0
    compute_seconds: int = 0
    wall_clock_seconds: int = 0
    external_actions: int = 0

    @field_validator(*DIMENSIONS, mode="before")
    @classmethod
    def _no_bool(cls, value: Any) -> Any:
        return reject_bool(value)

    @classmethod
    def from_usage(cls, usage: Any) -> "BudgetUsageState":
        value = _usage(usage, "usage")
        return cls(**{name: getattr(value, name) for name in DIMENSIONS})

    def to_usage(self) -> ResourceUsage:
        return ResourceUsage(**{name: getattr(self, name) for name in DIMENSIONS})


class MissionBudgetState(_FrozenModel):
    """A Mission account: the reference's fields, then its ``currency``."""

    mission_id: str
    parent_mission_id: Optional[str] = None
    parent_work_item_id: Optional[str] = None
    limit: BudgetLimitState
    usage: BudgetUsageState
    currency: Optional[str] = None


class WorkItemBudgetState(_FrozenModel):
    """A WorkItem account."""

    work_item_id: str
    mission_id: str
    parent_work_item_id: Optional[str] = None
    limit: BudgetLimitState
    direct_usage: BudgetUsageState
    usage: BudgetUsageState


def _core_counts(state: Union[BudgetLimitState, BudgetUsageState]) -> Dict[str, int]:
    return {_camel(name): getattr(state, name) or 0 for name in DIMENSIONS}


class BudgetLedgerSnapshot(_FrozenModel):
    """The whole ledger (``schema_version=2``); validated by rebuilding it in the core."""

    schema_version: int = 2
    missions: Tuple[MissionBudgetState, ...] = Field(default_factory=tuple)
    work_items: Tuple[WorkItemBudgetState, ...] = Field(default_factory=tuple)

    @field_validator("missions", "work_items", mode="before")
    @classmethod
    def _accounts(cls, value: Any) -> Any:
        # Accept accounts keyed by id as well as sequences.
        return tuple(value.values()) if isinstance(value, Mapping) else value

    @model_validator(mode="after")
    def _core_rules(self, info: ValidationInfo) -> "BudgetLedgerSnapshot":
        if self.schema_version != 2:
            invalid(
                "INVALID_COMMAND",
                "unsupported_version",
                f"schema_version {self.schema_version} is not read (only 2)",
            )
        if info.context and info.context.get(_TRUSTED):
            return self
        try:
            _native.BudgetLedger.rebuild(self.to_core_dict())
        except MissionWeaveError as error:
            core_refusal(error)
        return self

    def to_core_dict(self) -> Dict[str, Any]:
        """The core's JSON form (``{"version": 1, "missions": ..., "workItems": ...}``).
        Raises :class:`BudgetLedgerError` (``parent``) for a ``parent_mission_id`` the core
        cannot represent."""
        mission_of = {w.work_item_id: w.mission_id for w in self.work_items}
        missions: List[Dict[str, Any]] = []
        for m in self.missions:
            if m.parent_mission_id is not None and (
                m.parent_work_item_id is None
                or mission_of.get(m.parent_work_item_id, m.parent_mission_id) != m.parent_mission_id
            ):
                raise BudgetLedgerError(
                    f"Mission {m.mission_id!r}: a child Mission is reserved against the WorkItem "
                    "it was promoted from; parent_mission_id must be that WorkItem's Mission",
                    kind="parent",
                    code="INVALID_COMMAND",
                    account=("mission", m.mission_id),
                )
            doc: Dict[str, Any] = {"missionId": m.mission_id}
            if m.parent_work_item_id is not None:
                doc["parentWorkItemId"] = m.parent_work_item_id
            if m.currency is not None:
                doc["currency"] = m.currency
            doc["limit"] = _core_counts(m.limit)
            doc["usage"] = _core_counts(m.usage)
            missions.append(doc)
        items: List[Dict[str, Any]] = []
        for w in self.work_items:
            doc = {"workItemId": w.work_item_id, "missionId": w.mission_id}
            if w.parent_work_item_id is not None:
                doc["parentWorkItemId"] = w.parent_work_item_id
            doc.update(limit=_core_counts(w.limit), directUsage=_core_counts(w.direct_usage),
                       usage=_core_counts(w.usage))
            items.append(doc)
        return {"version": 1, "missions": missions, "workItems": items}

    @classmethod
    def _from_core_dict(cls, data: Mapping[str, Any], *, trusted: bool) -> "BudgetLedgerSnapshot":
        mission_of = {w["workItemId"]: w["missionId"] for w in data.get("workItems", ())}

        def counts(raw: Mapping[str, Any]) -> Dict[str, Any]:
            return {name: raw.get(_camel(name)) for name in DIMENSIONS}

        missions = [
            {
                "mission_id": m["missionId"],
                "parent_mission_id": mission_of.get(m.get("parentWorkItemId")),
                "parent_work_item_id": m.get("parentWorkItemId"),
                "limit": counts(m["limit"]),
                "usage": counts(m["usage"]),
                "currency": m.get("currency"),
            }
            for m in data.get("missions", ())
        ]
        items = [
            {
                "work_item_id": w["workItemId"],
                "mission_id": w["missionId"],
                "parent_work_item_id": w.get("parentWorkItemId"),
                "limit": counts(w["limit"]),
                "direct_usage": counts(w["directUsage"]),
                "usage": counts(w["usage"]),
            }
            for w in data.get("workItems", ())
        ]
        return cls.model_validate(
            {"schema_version": 2, "missions": missions, "work_items": items},
            context={_TRUSTED: trusted},
        )

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "BudgetLedgerSnapshot":
        """From ``to_dict()`` (the model form) or the core's form (``"version": 1``); anything
        but a mapping is :class:`~missionweaveprotocol.errors.InvalidInputError`."""
        if not isinstance(data, Mapping):
            # Not a snapshot's form: the core's conversion refuses it (InvalidInputError).
            core = _native.BudgetLedgerSnapshot.from_dict(data)
            return cls._from_core_dict(core.to_dict(), trusted=True)
        if "version" in data and "schemaVersion" not in data and "schema_version" not in data:
            _native.BudgetLedger.rebuild(data)  # the core's rules; raises BudgetLedgerError
            return cls._from_core_dict(data, trusted=True)
        return cls.model_validate(data)

    @classmethod
    def from_json(cls, text: Union[str, bytes]) -> "BudgetLedgerSnapshot":
        """From either JSON form (strict parser for the core's form)."""
        data = _native.parse_json(text)
        if not isinstance(data, Mapping):
            raise BudgetLedgerError(
                "a budget snapshot is a JSON object", kind="malformed_snapshot", code="INVALID_COMMAND"
            )
        return cls.from_dict(data)

    def to_dict(self) -> Dict[str, Any]:
        """JSON-ready camelCase form (``model_dump(mode="json", by_alias=True)``)."""
        return self.model_dump(mode="json", by_alias=True)

    def to_json(self) -> str:
        return self.model_dump_json(by_alias=True)

    @property
    def mission_ids(self) -> List[str]:
        return [m.mission_id for m in self.missions]

    @property
    def work_item_ids(self) -> List[str]:
        return [w.work_item_id for w in self.work_items]


def _snapshot_arg(snapshot: Any) -> Any:
    """What the core's ``BudgetLedger.rebuild`` takes, from any accepted snapshot form."""
    if isinstance(snapshot, BudgetLedgerSnapshot):
        return snapshot.to_core_dict()
    if isinstance(snapshot, Mapping):
        if "version" in snapshot and "schemaVersion" not in snapshot and "schema_version" not in snapshot:
            return snapshot
        return BudgetLedgerSnapshot.model_validate(snapshot).to_core_dict()
    return snapshot


class BudgetLedger:
    """``BudgetLedger()``: the ledger; every rule runs in the Rust core."""

    __slots__ = ("_core",)

    def __init__(self) -> None:
        self._core = _native.BudgetLedger()

    def register_mission(
        self,
        mission_id: str,
        limit: Any,
        *,
        parent_mission_id: Optional[str] = None,
        parent_work_item_id: Optional[str] = None,
        currency: Optional[str] = None,
    ) -> None:
        """Registers a root Mission, or — with ``parent_work_item_id`` — a child Mission
        promoted from that WorkItem (its limits are reserved against it; the currency defaults
        to the parent's and must match it). A nonzero financial limit needs a currency."""
        if parent_mission_id is not None:
            owner = None
            if parent_work_item_id is not None:
                snapshot = self._core.snapshot().to_dict()
                owner = next(
                    (w["missionId"] for w in snapshot["workItems"] if w["workItemId"] == parent_work_item_id),
                    parent_mission_id,
                )
            if owner != parent_mission_id:
                raise BudgetLedgerError(
                    "a child Mission is reserved against the WorkItem it was promoted from; "
                    "parent_mission_id must be that WorkItem's Mission",
                    kind="parent",
                    code="INVALID_COMMAND",
                    account=("mission", mission_id),
                )
        self._core.register_mission(
            mission_id,
            _usage(limit, "limit"),
            currency=currency,
            parent_work_item_id=parent_work_item_id,
        )

    def register_work_item(
        self,
        work_item_id: str,
        mission_id: str,
        limit: Any,
        *,
        parent_work_item_id: Optional[str] = None,
    ) -> None:
        """Registers a WorkItem under its Mission or under a parent WorkItem of the same
        Mission."""
        self._core.register_work_item(
            work_item_id, mission_id, _usage(limit, "limit"), parent_work_item_id=parent_work_item_id
        )

    def consume(self, work_item_id: str, delta: Any) -> ResourceUsage:
        """Charges the WorkItem and every ancestor atomically; returns the delta."""
        if type(delta) is not ResourceUsage:  # the hot path skips the conversion
            delta = _usage(delta, "delta")
        return self._core.consume(work_item_id, delta)

    def remaining(self, account: AccountRef) -> ResourceUsage:
        """What the account may still spend (the minimum over its ancestry)."""
        return self._core.remaining(account)

    def usage(self, account: AccountRef) -> ResourceUsage:
        return self._core.usage(account)

    def limit(self, account: AccountRef) -> ResourceUsage:
        return self._core.limit(account)

    def reserved(self, account: AccountRef) -> ResourceUsage:
        return self._core.reserved(account)

    def currency(self, account: AccountRef) -> Optional[str]:
        return self._core.currency(account)

    def depth(self, account: AccountRef) -> int:
        return self._core.depth(account)

    def snapshot(self) -> BudgetLedgerSnapshot:
        return BudgetLedgerSnapshot._from_core_dict(self._core.snapshot().to_dict(), trusted=True)

    @classmethod
    def rebuild(cls, snapshot: Union[BudgetLedgerSnapshot, Mapping[str, Any]]) -> "BudgetLedger":
        """From a snapshot, its ``to_dict()`` form or the core's form; refuses duplicates,
        dangling or cross-Mission parents, cycles, currency conflicts, over-reservation and
        inconsistent totals (:class:`BudgetLedgerError`, or :class:`pydantic.ValidationError`
        for a malformed model form). Anything but a snapshot or a mapping (``None``, a number,
        a list) is :class:`~missionweaveprotocol.errors.InvalidInputError` (argument
        ``snapshot``), decided by the core's conversion."""
        ledger = cls.__new__(cls)
        ledger._core = _native.BudgetLedger.rebuild(_snapshot_arg(snapshot))
        return ledger

    def __len__(self) -> int:
        return len(self._core)

    def __repr__(self) -> str:
        return f"BudgetLedger(accounts={len(self)})"


__all__ = [
    "AccountRef",
    "BudgetLedger",
    "BudgetLedgerError",
    "BudgetLedgerSnapshot",
    "BudgetLimitState",
    "BudgetUsageState",
    "DIMENSIONS",
    "MissionBudgetState",
    "ResourceUsage",
    "WorkItemBudgetState",
]
