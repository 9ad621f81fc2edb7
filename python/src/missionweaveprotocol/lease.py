"""Fenced leases (§11.3, ``lease.schema.json``).

:class:`ExecutionLease` is a pydantic v2 model, as in the reference runtime (a
``ProtocolModel``: camelCase aliases, ``model_validate``, ``model_dump(by_alias=True)``,
``model_copy``, ``validate_assignment``), whose protocol rules run in the Rust core: every
validation (construction, ``model_validate``, ``model_validate_json``, assignment) renders the
fields as a ``lease.schema.json`` document and reads it back through the core
(``core/kernel/src/lease``: the schema, the type-specific members, the window, the renewal
history and the closure rules). A core refusal becomes a :class:`pydantic.ValidationError`
whose error ``type`` is the §19 wire code and whose ``ctx`` holds ``code``, ``reason`` and the
core's ``kind``.

``renew(*, at, expires_at)`` and ``close(state, *, at, reason)`` run the core's transitions and
return new models: renewal is strictly monotonic and strictly extending and must happen before
expiry; closure is final (repeating the identical closure is a no-op, any other closure
raises). They raise :class:`LeaseError` (a ``ValueError``, as the reference's) with the wire
code (``WORK_LEASE_EXPIRED``, ``INVALID_STATE_TRANSITION``, ``INVALID_COMMAND``).
``check_claim`` fences a lease-bound Command by holder, Session Epoch, Ownership or Coordinator
Epoch, Lease ID and time.

Differences from the reference, on purpose:

- The four lease types of ``lease.schema.json`` share the model: ``lease_type`` may be
  ``execution`` (the default, the reference's only type), ``ownership`` (with ``start_by``),
  ``blocked`` (optional ``grace_expires_at``) or ``coordinator`` (``coordinator_epoch``, no
  WorkItem). ``work_item_id`` and ``ownership_epoch`` stay required as in the reference but
  accept ``None`` for coordinator leases (a coordinator document may omit them).
- Identifiers are those of the schema (absolute URIs such as ``urn:lease:1``), not any string.
- Instants are timezone-aware (``AwareDatetime``, as the reference) and kept to the millisecond,
  the core's and the document's precision: finer parts are floored.
- Strings are not stripped; ``True`` is not an epoch; a refused assignment leaves the model as it
  was (see :mod:`missionweaveprotocol._protocol_model`).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Dict, Optional, TypeVar, Union

from pydantic import AwareDatetime, field_validator, model_validator

from ._protocol_model import (
    ProtocolModel,
    core_refusal,
    floor_millis,
    reject_bool,
    render_instant,
    render_optional,
)
from ._types import LeaseState, LeaseType
from .errors import InvalidInputError, LeaseError, MissionWeaveError

if TYPE_CHECKING:
    from ._native import ExecutionLease as _CoreLease

MAX_SAFE_INTEGER = 9_007_199_254_740_991

_Lease = TypeVar("_Lease", bound="ExecutionLease")

_INSTANTS = (
    "issued_at",
    "starts_at",
    "expires_at",
    "last_renewed_at",
    "closed_at",
    "start_by",
    "grace_expires_at",
)


def _core_class() -> "type[_CoreLease]":
    from ._native import ExecutionLease as core

    return core


class ExecutionLease(ProtocolModel):
    """A fenced lease record (``lease.schema.json``); see the module documentation."""

    lease_id: str
    lease_type: LeaseType = LeaseType.EXECUTION
    mission_id: str
    group_id: str
    work_item_id: Optional[str]
    holder_agent_id: str
    session_epoch: int
    ownership_epoch: Optional[int]
    issued_at: AwareDatetime
    starts_at: AwareDatetime
    expires_at: AwareDatetime
    state: LeaseState = LeaseState.ACTIVE
    renewal_count: int = 0
    last_renewed_at: Optional[AwareDatetime] = None
    closed_at: Optional[AwareDatetime] = None
    closure_reason: Optional[str] = None
    # Members of the other lease types (not in the reference's execution-only model).
    coordinator_epoch: Optional[int] = None
    start_by: Optional[AwareDatetime] = None
    grace_expires_at: Optional[AwareDatetime] = None

    @model_validator(mode="before")
    @classmethod
    def _coordinator_has_no_work_item(cls, data: Any) -> Any:
        # A coordinator document omits workItemId/ownershipEpoch; the fields stay required for
        # every other type, as in the reference.
        if isinstance(data, dict):
            kind = data.get("leaseType", data.get("lease_type"))
            if str(kind) == LeaseType.COORDINATOR.value:
                data = dict(data)
                for name, alias in (("work_item_id", "workItemId"), ("ownership_epoch", "ownershipEpoch")):
                    if name not in data and alias not in data:
                        data[name] = None
        return data

    @field_validator("session_epoch", "ownership_epoch", "coordinator_epoch", "renewal_count", mode="before")
    @classmethod
    def _no_bool(cls, value: Any) -> Any:
        return reject_bool(value)

    @field_validator("closure_reason", mode="before")
    @classmethod
    def _stripped_reason(cls, value: Any) -> Any:
        # Trimmed as the reference's models strip strings; the rule is the core's.
        if not isinstance(value, str):
            return value
        from ._native import lease_closure_reason

        try:
            return lease_closure_reason(value)
        except MissionWeaveError as error:
            core_refusal(error)

    @field_validator(*_INSTANTS, mode="after")
    @classmethod
    def _millis(cls, value: Optional[datetime]) -> Optional[datetime]:
        return None if value is None else floor_millis(value)

    @model_validator(mode="after")
    def _core_rules(self) -> "ExecutionLease":
        try:
            _core_class().from_dict(self._document())
        except MissionWeaveError as error:
            core_refusal(error)
        return self

    def _document(self) -> Dict[str, Any]:
        """The ``lease.schema.json`` document of the current fields (absent members omitted)."""
        members: Dict[str, Any] = {
            "leaseId": self.lease_id,
            "leaseType": LeaseType(self.lease_type).value,
            "missionId": self.mission_id,
            "groupId": self.group_id,
            "workItemId": self.work_item_id,
            "holderAgentId": self.holder_agent_id,
            "sessionEpoch": self.session_epoch,
            "ownershipEpoch": self.ownership_epoch,
            "coordinatorEpoch": self.coordinator_epoch,
            "issuedAt": render_instant(self.issued_at),
            "startsAt": render_instant(self.starts_at),
            "expiresAt": render_instant(self.expires_at),
            "startBy": render_optional(self.start_by),
            "graceExpiresAt": render_optional(self.grace_expires_at),
            "state": LeaseState(self.state).value,
            "renewalCount": self.renewal_count,
            "lastRenewedAt": render_optional(self.last_renewed_at),
            "closedAt": render_optional(self.closed_at),
            "closureReason": self.closure_reason,
        }
        return {name: value for name, value in members.items() if value is not None}

    def _core(self) -> "_CoreLease":
        # Rebuilt from the fields on every call: ``model_copy(update=...)`` does not validate
        # (as in pydantic and the reference), so a cached core value could be stale.
        return _core_class().from_dict(self._document())

    @classmethod
    def _from_core(cls: "type[_Lease]", core: "_CoreLease") -> _Lease:
        return cls.model_construct(
            lease_id=core.lease_id,
            lease_type=core.lease_type,
            mission_id=core.mission_id,
            group_id=core.group_id,
            work_item_id=core.work_item_id,
            holder_agent_id=core.holder_agent_id,
            session_epoch=core.session_epoch,
            ownership_epoch=core.ownership_epoch,
            issued_at=core.issued_at,
            starts_at=core.starts_at,
            expires_at=core.expires_at,
            state=core.state,
            renewal_count=core.renewal_count,
            last_renewed_at=core.last_renewed_at,
            closed_at=core.closed_at,
            closure_reason=core.closure_reason,
            coordinator_epoch=core.coordinator_epoch,
            start_by=core.start_by,
            grace_expires_at=core.grace_expires_at,
        )

    # --- the reference's transitions -------------------------------------------------------

    def renew(self: _Lease, *, at: datetime, expires_at: datetime) -> _Lease:
        """A new lease renewed at ``at`` to ``expires_at`` (strictly after the previous renewal,
        strictly extending, before expiry, within any grace bound). Raises :class:`LeaseError`."""
        return self._from_core(self._core().renew(at=at, expires_at=expires_at))

    def close(
        self: _Lease, state: Union[LeaseState, str], *, at: datetime, reason: str
    ) -> _Lease:
        """A new lease closed with ``state`` (``released``, ``revoked`` or ``expired``).
        Repeating the identical closure returns an equal lease; any other closure of a closed
        lease raises :class:`LeaseError` (``INVALID_STATE_TRANSITION``)."""
        return self._from_core(self._core().close(state, at=at, reason=reason))

    # --- beyond the reference --------------------------------------------------------------

    def state_at(self, now: datetime) -> LeaseState:
        """The state at ``now``: an active lease past its expiry reads as expired."""
        return self._core().state_at(now)

    def is_live(self, now: datetime) -> bool:
        """True while active, started and unexpired at ``now``."""
        return self._core().is_live(now)

    def check_claim(
        self,
        *,
        agent_id: str,
        lease_id: str,
        session_epoch: int,
        now: datetime,
        ownership_epoch: Optional[int] = None,
        coordinator_epoch: Optional[int] = None,
    ) -> None:
        """Fencing check for a lease-bound Command at ``now``; raises :class:`LeaseError` with
        the wire code (``AUTH_FORBIDDEN``, ``AUTH_STALE_SESSION``, ``WORK_STALE_OWNERSHIP``,
        ``AUTH_STALE_COORDINATOR``, ``WORK_LEASE_EXPIRED``)."""
        self._core().check_claim(
            agent_id=agent_id,
            lease_id=lease_id,
            session_epoch=session_epoch,
            now=now,
            ownership_epoch=ownership_epoch,
            coordinator_epoch=coordinator_epoch,
        )

    def check_start_by(self, now: datetime) -> None:
        """For ownership leases: may work start at ``now``? (start-by deadline, §11.5)."""
        self._core().check_start_by(now)

    @classmethod
    def from_json(cls: "type[_Lease]", text: Union[str, bytes, bytearray, memoryview]) -> _Lease:
        """Reads a lease from its ``lease.schema.json`` document text, strictly (strict JSON,
        the schema, the lease rules; sub-millisecond instants are refused, not floored).
        A refusal is the error inside the document, as in every binding:
        :class:`JsonParseError` (``PROTOCOL_VIOLATION``), :class:`SchemaValidationError`
        (``SCHEMA_VALIDATION_FAILED``) or :class:`LeaseError` (the lease rule it breaks)."""
        return cls._from_core(_core_class().from_json(text))

    @classmethod
    def from_dict(cls: "type[_Lease]", data: Dict[str, Any]) -> _Lease:
        """Reads a lease from its document as plain values (as ``to_dict`` gives), strictly."""
        return cls._from_core(_core_class().from_dict(data))

    def to_json(self) -> str:
        """The ``lease.schema.json`` document in RFC 8785 canonical form."""
        return self._core().to_json()

    def to_dict(self) -> Dict[str, Any]:
        """The ``lease.schema.json`` document as plain values (absent members omitted,
        timestamps as text) — unlike ``model_dump``, which keeps ``None`` and datetimes."""
        return self._core().to_dict()

    @classmethod
    def ownership(cls: "type[_Lease]", *, start_by: datetime, **fields: Any) -> _Lease:
        """An ownership lease: queued ownership with a start-by deadline inside the window."""
        return cls(lease_type=LeaseType.OWNERSHIP, start_by=start_by, **fields)

    @classmethod
    def blocked(
        cls: "type[_Lease]", *, grace_expires_at: Optional[datetime] = None, **fields: Any
    ) -> _Lease:
        """A blocked lease (ownership retained while blocked), optionally with a grace bound."""
        return cls(lease_type=LeaseType.BLOCKED, grace_expires_at=grace_expires_at, **fields)

    @classmethod
    def coordinator(cls: "type[_Lease]", *, coordinator_epoch: int, **fields: Any) -> _Lease:
        """A Coordinator lease (§7.2), fenced by the Coordinator Epoch; no WorkItem."""
        return cls(
            lease_type=LeaseType.COORDINATOR,
            coordinator_epoch=coordinator_epoch,
            work_item_id=None,
            ownership_epoch=None,
            **fields,
        )


__all__ = [
    "ExecutionLease",
    "InvalidInputError",
    "LeaseError",
    "LeaseState",
    "LeaseType",
    "MAX_SAFE_INTEGER",
]
