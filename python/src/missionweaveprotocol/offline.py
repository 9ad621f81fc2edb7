"""Bounded reversible progress while disconnected (§11.5, digest 2.17; the reference's
``offline.py``).

While the Group service is unreachable a Worker may continue already-active *reversible*
computation — only ``message.post`` and ``work.checkpoint`` — until a grace deadline
(``min(disconnected_at + max_disconnect_grace, lease expiry)``) and within
:class:`OfflineLimits`. :meth:`OfflineExecutionPolicy.buffer` checks each Command against the
assignment (Agent, Group, WorkItem, lease, Ownership and Session Epochs, Conversation), refuses
external usage and secret payload members, attaches the **critical** extension
:data:`OFFLINE_EXECUTION_EXTENSION` whose data is an :class:`OfflineProgressBinding`, re-signs
with the Agent's key and queues it in the store's outbox (``enqueue_action``), idempotent per
Action ID. On reconnect :func:`rebase_offline_command` keeps the binding but sets the current
``issuedAt``, Session Epoch and Membership Epoch (and, for a checkpoint, the new lease) and
re-signs; the authority then reconciles it (charge, then checkpoint, in one transaction).

The rules run in the Rust core. Every refusal is :class:`OfflinePolicyError` (a ``ValueError``)
with ``code`` (the §19 wire code) and ``kind``.

``identity`` is any object with ``agent_id`` that either satisfies the ``SigningKey`` protocol
(``key_id``, ``algorithm``, ``public_key_bytes``, ``sign(bytes) -> bytes``; e.g. a
:class:`~missionweaveprotocol.crypto.SigningKey` with an ``agent_id``), has a ``signing_key``
attribute that does, or is a reference-style ``AgentIdentity`` (``public_key`` and
``sign(bytes) -> str``, both base64url), signed under ``key_id`` or
``urn:missionweaveprotocol:key:<last segment of the Agent ID>``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Dict, Mapping, Optional, Tuple

from pydantic import AwareDatetime, ConfigDict, field_serializer, field_validator, model_validator

from . import _native
from ._native import InMemoryOutbox, ResourceUsage
from ._protocol_model import ProtocolModel, render_instant
# The shared error model's class (`errors.py`, the core's `ErrorClass::Offline`).
from .errors import AuthenticationError, OfflinePolicyError
from .models import Command

OFFLINE_EXECUTION_EXTENSION: str = _native.OFFLINE_EXECUTION_EXTENSION
OFFLINE_EXECUTION_EXTENSION_VERSION: str = _native.OFFLINE_EXECUTION_EXTENSION_VERSION
OFFLINE_REVERSIBLE_KINDS: frozenset[str] = frozenset(_native.OFFLINE_REVERSIBLE_KINDS)

Clock = Callable[[], datetime]
JsonDict = Dict[str, Any]

_DIMENSIONS = (
    ("financial_microunits", "financialMicrounits"),
    ("model_tokens", "modelTokens"),
    ("tool_calls", "toolCalls"),
    ("compute_seconds", "computeSeconds"),
    ("wall_clock_seconds", "wallClockSeconds"),
    ("external_actions", "externalActions"),
)




def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


def _usage(value: Any) -> ResourceUsage:
    if value is None:
        return ResourceUsage()
    if isinstance(value, ResourceUsage):
        return value
    if isinstance(value, Mapping):
        members = {}
        for snake, camel in _DIMENSIONS:
            if snake in value or camel in value:
                members[snake] = value[snake] if snake in value else value[camel]
        return ResourceUsage(**members)
    return ResourceUsage(**{snake: getattr(value, snake, 0) or 0 for snake, _ in _DIMENSIONS})


def _usage_wire(usage: ResourceUsage) -> JsonDict:
    return {camel: getattr(usage, snake) for snake, camel in _DIMENSIONS}


class OfflineProgressBinding(ProtocolModel):
    """The data of the critical offline extension: Agent, Group, WorkItem; the historical
    Session Epoch, Ownership Epoch and Execution Lease; disconnect, buffer, grace-deadline and
    lease-expiry instants (an ordered window); the usage delta (no external actions)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    agent_id: str
    group_id: str
    work_item_id: str
    session_epoch: int
    ownership_epoch: int
    execution_lease_id: str
    disconnected_at: AwareDatetime
    buffered_at: AwareDatetime
    grace_deadline: AwareDatetime
    execution_lease_expires_at: AwareDatetime
    resource_usage_delta: ResourceUsage = ResourceUsage()

    @field_validator("resource_usage_delta", mode="before")
    @classmethod
    def _delta(cls, value: Any) -> ResourceUsage:
        return _usage(value)

    @field_serializer("resource_usage_delta")
    def _delta_wire(self, value: ResourceUsage) -> JsonDict:
        return _usage_wire(value)

    @field_serializer("disconnected_at", "buffered_at", "grace_deadline", "execution_lease_expires_at")
    def _instant(self, value: datetime) -> str:
        return render_instant(value)

    @model_validator(mode="after")
    def _core_rules(self) -> "OfflineProgressBinding":
        # The ordered window, positive epochs, non-empty IDs and no external actions: the core's.
        try:
            _native.validate_offline_binding(self.to_wire())
        except OfflinePolicyError as error:
            raise ValueError(str(error)) from error
        return self

    def to_wire(self) -> JsonDict:
        """The extension's ``data`` (camelCase, §2 timestamps)."""
        document: JsonDict = self.model_dump(mode="json", by_alias=True)
        return document

    @classmethod
    def from_command(cls, command: Any) -> Optional["OfflineProgressBinding"]:
        """The binding a Command (model or wire mapping) carries, or ``None``."""
        data = _native.offline_binding_of(_wire(command))
        return None if data is None else cls.model_validate(data)


@dataclass(frozen=True)
class OfflineLimits:
    """The offline bounds: ``max_disconnect_grace`` > 0, ``max_actions`` ≥ 1, ``max_usage``."""

    max_disconnect_grace: timedelta
    max_actions: int
    max_usage: ResourceUsage

    def __post_init__(self) -> None:
        # The core's check (`OfflineLimits::validate`), with the core's OfflinePolicyError.
        _native.offline_check_limits(self.max_disconnect_grace, self.max_actions)
        if not isinstance(self.max_usage, ResourceUsage):
            object.__setattr__(self, "max_usage", _usage(self.max_usage))

    @property
    def max_disconnect_grace_ms(self) -> int:
        return self.max_disconnect_grace // timedelta(milliseconds=1)


def _wire(command: Any) -> JsonDict:
    if isinstance(command, Command):
        if command.signed_bytes is not None:
            # The exact signed document, not a re-rendering of the model.
            exact: JsonDict = _native.parse_json(command.signed_bytes)
            return exact
        return command.to_wire()
    if isinstance(command, Mapping):
        return dict(command)
    to_wire = getattr(command, "to_wire", None)
    if callable(to_wire):
        document: JsonDict = to_wire()
        return document
    raise TypeError(f"a Command or a wire Command mapping is required, not {type(command).__name__}")


def _command(document: JsonDict) -> Command:
    return Command.from_wire(_native.canonical_bytes(document))


def default_agent_key_id(agent_id: str) -> str:
    """``urn:missionweaveprotocol:key:<last path or colon segment of agent_id>`` (the
    reference's default Agent key ID; the core's rule, as :func:`.auth.default_agent_key_id`)."""
    try:
        return _native.auth_default_agent_key_id(agent_id)
    except AuthenticationError as error:
        raise OfflinePolicyError(str(error)) from error


class _IdentitySigningKey:
    """A reference-style ``AgentIdentity`` (``public_key``, ``sign() -> str``) as a
    ``SigningKey``-protocol object."""

    algorithm = "Ed25519"

    def __init__(self, identity: Any, key_id: str) -> None:
        self._identity = identity
        self.key_id = key_id
        public = _native.decode_base64url(str(identity.public_key))
        if public is None:
            raise OfflinePolicyError("identity.public_key is not canonical base64url")
        self.public_key_bytes = public

    def sign(self, message: bytes) -> bytes:
        signature = self._identity.sign(message)
        if isinstance(signature, (bytes, bytearray)):
            return bytes(signature)
        decoded = _native.decode_base64url(str(signature))
        if decoded is None:
            raise OfflinePolicyError("identity.sign() did not return base64url")
        return decoded


def _signer(identity: Any, key_id: Optional[str] = None) -> Any:
    signing_key = getattr(identity, "signing_key", None)
    if signing_key is not None:
        return signing_key
    if all(hasattr(identity, name) for name in ("key_id", "algorithm", "public_key_bytes", "sign")):
        return identity
    return _IdentitySigningKey(identity, key_id or default_agent_key_id(str(identity.agent_id)))


def _read(obj: Any, *names: str) -> Any:
    for name in names:
        if isinstance(obj, Mapping) and name in obj:
            return obj[name]
        if hasattr(obj, name):
            return getattr(obj, name)
    return None


class OfflineExecutionPolicy:
    """Bounded, reversible, signed buffering for one active, owned, leased WorkItem.

    ``store`` provides ``enqueue_action(agent_id, action_id, payload)``,
    ``pending_actions(agent_id)`` and ``mark_action_sent(agent_id, action_id)`` (the Agent's
    local store, or :class:`InMemoryOutbox`). ``work_item`` is read by attribute or key:
    ``id``/``work_item_id``, ``group_id``, ``conversation_id``, ``status`` (must be
    ``active`` when given), ``assignee_id`` (must be the identity's Agent when given),
    ``ownership_epoch``, ``execution_lease_id``, ``execution_lease_expires_at`` and
    ``session_epoch`` (or the keyword ``session_epoch``, this package's extension: the
    reference's WorkItem has none).
    """

    __slots__ = ("_store", "_identity", "_signing_key", "_core", "_clock", "_limits")

    def __init__(
        self,
        store: Any,
        identity: Any,
        work_item: Any,
        *,
        disconnected_at: datetime,
        limits: OfflineLimits,
        clock: Optional[Clock] = None,
        session_epoch: Optional[int] = None,
    ) -> None:
        for method in ("enqueue_action", "pending_actions", "mark_action_sent"):
            if not callable(getattr(store, method, None)):
                raise TypeError(f"store must provide {method}()")
        if not isinstance(limits, OfflineLimits):
            raise TypeError("limits must be OfflineLimits")
        agent_id = str(identity.agent_id)
        status = _read(work_item, "status", "state")
        if status is not None and str(getattr(status, "value", status)) != "active":
            raise OfflinePolicyError("offline progress needs an active WorkItem", code="INVALID_STATE_TRANSITION", kind="not_active")
        assignee = _read(work_item, "assignee_id", "owner_agent_id")
        if assignee is not None and assignee != agent_id:
            raise OfflinePolicyError("the WorkItem is owned by another Agent", code="WORK_STALE_OWNERSHIP", kind="stale_ownership")
        lease_id = _read(work_item, "execution_lease_id")
        expires_at = _read(work_item, "execution_lease_expires_at")
        epoch = session_epoch if session_epoch is not None else _read(work_item, "session_epoch")
        if lease_id is None or expires_at is None or epoch is None:
            raise OfflinePolicyError(
                "offline progress needs a current Execution Lease and Session Epoch",
                code="INVALID_STATE_TRANSITION",
                kind="not_active",
            )
        self._store = store
        self._identity = identity
        self._signing_key = _signer(identity)
        self._clock: Clock = clock if clock is not None else _utc_now
        self._limits = limits
        self._core = _native.NativeOfflinePolicy(
            agent_id=agent_id,
            group_id=_read(work_item, "group_id"),
            work_item_id=_read(work_item, "work_item_id", "id"),
            conversation_id=_read(work_item, "conversation_id"),
            session_epoch=epoch,
            ownership_epoch=_read(work_item, "ownership_epoch") or 0,
            execution_lease_id=lease_id,
            execution_lease_expires_at=expires_at,
            disconnected_at=disconnected_at,
            max_disconnect_grace_ms=limits.max_disconnect_grace_ms,
            max_actions=limits.max_actions,
            max_usage=limits.max_usage,
        )

    @property
    def grace_deadline(self) -> datetime:
        return self._core.grace_deadline

    @property
    def limits(self) -> OfflineLimits:
        return self._limits

    @property
    def buffered_actions(self) -> Tuple[Command, ...]:
        return tuple(_command(document) for document in self._core.buffered_actions)

    @property
    def cumulative_usage(self) -> ResourceUsage:
        return self._core.cumulative_usage

    def buffer(self, command: Any, *, usage: Any = None, now: Optional[datetime] = None) -> Command:
        """Validates ``command``, attaches the critical binding, re-signs it with the Agent key
        and enqueues it; the same Command again returns the same signed Command."""
        signed = self._core.buffer(
            self._store,
            self._signing_key,
            _wire(command),
            usage=_usage(usage),
            now=self._clock() if now is None else now,
        )
        return _command(signed)


def offline_command_to_wire(
    command: Any,
    identity: Any,
    *,
    session_epoch: int,
    membership_epoch: int,
    issued_at: Optional[datetime] = None,
    execution_lease_id: Optional[str] = None,
    key_id: Optional[str] = None,
) -> JsonDict:
    """The buffered Command rebased onto the current session and re-signed, as a normative
    wire Command document (the binding is kept unchanged)."""
    signed: JsonDict = _native.rebase_offline_command(
        _wire(command),
        _signer(identity, key_id),
        session_epoch=session_epoch,
        membership_epoch=membership_epoch,
        issued_at=_utc_now() if issued_at is None else issued_at,
        execution_lease_id=execution_lease_id,
    )
    return signed


def rebase_offline_command(
    command: Any,
    identity: Any,
    *,
    session_epoch: int,
    membership_epoch: int,
    issued_at: Optional[datetime] = None,
    execution_lease_id: Optional[str] = None,
) -> Command:
    """:func:`offline_command_to_wire` as a :class:`~missionweaveprotocol.models.Command`."""
    return _command(
        offline_command_to_wire(
            command,
            identity,
            session_epoch=session_epoch,
            membership_epoch=membership_epoch,
            issued_at=issued_at,
            execution_lease_id=execution_lease_id,
        )
    )


__all__ = [
    "InMemoryOutbox",
    "OFFLINE_EXECUTION_EXTENSION",
    "OFFLINE_EXECUTION_EXTENSION_VERSION",
    "OFFLINE_REVERSIBLE_KINDS",
    "OfflineExecutionPolicy",
    "OfflineLimits",
    "OfflinePolicyError",
    "OfflineProgressBinding",
    "default_agent_key_id",
    "offline_command_to_wire",
    "rebase_offline_command",
]
