"""The authoritative state machine: ``Core`` with ``perform``, ``query`` and ``replay`` (the
reference's three operations, ``reference-python.md`` §1.5), run by the Rust engine
(``service::Core``) with the GIL released and off the event loop's thread.

Errors: every refusal is a :class:`MissionWeaveProtocolError` subclass named after the
reference's :class:`ErrorCode` family, chosen by the Rust core's table (§19 wire code and
reason → family); each carries ``code`` (the family), ``message``, ``details`` (the core's
structured fields) and, beyond the reference, ``wire_code`` (the §19 code), ``reason`` (a
stable slug) and ``retryable``. Nothing was applied when one is raised. Beyond the reference's
15 families, the store's own failures (damaged data at rest, a failing backend, a closed store)
are :class:`StoreError` (``store_failure``), never :class:`RevisionConflict`: retry on
:class:`RevisionConflict`, and on :class:`StoreError` only when its ``retryable`` says so.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections import deque
from concurrent.futures import Executor, ThreadPoolExecutor
from datetime import datetime, timedelta, timezone
from types import MappingProxyType
from typing import (
    Any,
    Callable,
    ClassVar,
    Deque,
    Dict,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Type,
    Union,
)

from . import _native
from ._types import _StrEnum
from .crypto import SigningKey, encode_public_key
from .models import Command, CommandLike, Event, Principal, Query, QueryResult
from .registry import AgentRegistryKeyResolver
from .store import InMemoryStore, SQLStore

Clock = Callable[[], datetime]
"""A clock returning aware datetimes (the reference's ``Clock``)."""


class ErrorCode(_StrEnum):
    """The reference's 15 error families and ``store_failure`` (spelled by the Rust core,
    ``service/error.rs``)."""

    INVALID_COMMAND = "invalid_command"
    NOT_FOUND = "not_found"
    ALREADY_EXISTS = "already_exists"
    AUTHORIZATION_DENIED = "authorization_denied"
    ACTION_ID_COLLISION = "action_id_collision"
    STALE_SESSION_EPOCH = "stale_session_epoch"
    STALE_MEMBERSHIP_EPOCH = "stale_membership_epoch"
    STALE_COORDINATOR_EPOCH = "stale_coordinator_epoch"
    STALE_OWNERSHIP_EPOCH = "stale_ownership_epoch"
    LEASE_EXPIRED = "lease_expired"
    INVALID_TRANSITION = "invalid_transition"
    REVISION_CONFLICT = "revision_conflict"
    DEPENDENCY_ERROR = "dependency_error"
    POLICY_VIOLATION = "policy_violation"
    BUDGET_EXCEEDED = "budget_exceeded"
    STORE_FAILURE = "store_failure"


#: The defaults of ``Core(store)`` (the reference's call shape): the Group Authority's
#: Principal, its key ID (the reference gateway's authority key ID) and the Organization of the
#: Registry that binds only that key.
DEFAULT_AUTHORITY = "urn:missionweaveprotocol:service:group-authority"
DEFAULT_AUTHORITY_KEY_ID = "urn:missionweaveprotocol:key:group-gateway"
DEFAULT_ORGANIZATION = "urn:missionweaveprotocol:organization:default"


class MissionWeaveProtocolError(Exception):
    """A refusal of the Core: ``MissionWeaveProtocolError(message, **details)``.

    ``code`` is the family (:class:`ErrorCode`); ``wire_code`` the §19 code the core chose
    (``None`` for an error built in Python), ``reason`` its stable slug, ``retryable`` whether
    an unchanged retry can succeed (§19).
    """

    code: ClassVar[ErrorCode]

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details: Dict[str, Any] = dict(details)
        self.wire_code: Optional[str] = None
        self.reason: Optional[str] = None
        self.retryable = False

    def as_dict(self) -> Dict[str, Any]:
        """``{"code", "message", "details"}`` (the reference's shape)."""
        return {"code": self.code.value, "message": self.message, "details": dict(self.details)}


class InvalidCommand(MissionWeaveProtocolError):
    code = ErrorCode.INVALID_COMMAND


class NotFound(MissionWeaveProtocolError):
    code = ErrorCode.NOT_FOUND


class AlreadyExists(MissionWeaveProtocolError):
    code = ErrorCode.ALREADY_EXISTS


class AuthorizationDenied(MissionWeaveProtocolError):
    code = ErrorCode.AUTHORIZATION_DENIED


class ActionIdCollision(MissionWeaveProtocolError):
    code = ErrorCode.ACTION_ID_COLLISION


class StaleSessionEpoch(MissionWeaveProtocolError):
    code = ErrorCode.STALE_SESSION_EPOCH


class StaleMembershipEpoch(MissionWeaveProtocolError):
    code = ErrorCode.STALE_MEMBERSHIP_EPOCH


class StaleCoordinatorEpoch(MissionWeaveProtocolError):
    code = ErrorCode.STALE_COORDINATOR_EPOCH


class StaleOwnershipEpoch(MissionWeaveProtocolError):
    code = ErrorCode.STALE_OWNERSHIP_EPOCH


class LeaseExpired(MissionWeaveProtocolError):
    code = ErrorCode.LEASE_EXPIRED


class InvalidTransition(MissionWeaveProtocolError):
    code = ErrorCode.INVALID_TRANSITION


class RevisionConflict(MissionWeaveProtocolError):
    code = ErrorCode.REVISION_CONFLICT


class DependencyError(MissionWeaveProtocolError):
    code = ErrorCode.DEPENDENCY_ERROR


class PolicyViolation(MissionWeaveProtocolError):
    code = ErrorCode.POLICY_VIOLATION


class BudgetExceeded(MissionWeaveProtocolError):
    code = ErrorCode.BUDGET_EXCEEDED


class StoreError(MissionWeaveProtocolError):
    """The authoritative store failed (``store_failure``, ``wire_code`` ``INTERNAL_ERROR``):
    nothing was applied, and this is no conflict. ``reason`` says what: ``store_corrupt``
    (stored data failed its integrity check), ``corrupt_aggregate`` (a stored aggregate that
    cannot be read back), ``backend_failure`` (the database failed: busy, I/O, connection),
    ``store_closed`` / ``store_not_initialized`` (the store is not open). ``retryable`` is true
    only where an unchanged retry can succeed (a failing backend), never for damaged data or a
    closed store. ``stored`` and ``locator`` name the damaged row when the store names one
    (``"event"``, ``"g #3"``; ``"aggregate"``, ``"work_item w"``); ``fields`` holds every
    structured field (also ``details``)."""

    code = ErrorCode.STORE_FAILURE

    @property
    def fields(self) -> Mapping[str, Any]:
        """The core's structured fields (read-only; ``details`` is the reference's copy)."""
        return MappingProxyType(self.details)

    @property
    def stored(self) -> Optional[str]:
        """What was being read when the damage was found (``event``, ``aggregate``, …)."""
        value = self.details.get("stored")
        return value if isinstance(value, str) else None

    @property
    def locator(self) -> Optional[str]:
        """Which stored row failed (Group and sequence, aggregate kind and ID), if any."""
        value = self.details.get("locator")
        return value if isinstance(value, str) else None


_BY_CODE: Dict[ErrorCode, Type[MissionWeaveProtocolError]] = {
    cls.code: cls for cls in MissionWeaveProtocolError.__subclasses__()
}


def _native_refusal(
    family: str,
    wire_code: str,
    reason: str,
    message: str,
    fields: Dict[str, Any],
    retryable: bool,
) -> MissionWeaveProtocolError:
    """The exception of a core refusal (called by the native module with the core's family)."""
    error = _BY_CODE[ErrorCode(family)](message, **fields)
    error.wire_code = wire_code
    error.reason = reason
    error.retryable = retryable
    return error


def _argument_error(reason: str, message: str, **details: Any) -> InvalidCommand:
    error = InvalidCommand(message, **details)
    error.wire_code = "INVALID_COMMAND"
    error.reason = reason
    return error


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_I64 = (1 << 63) - 1


def _clamp(value: object, name: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise _argument_error("not_an_int", f"{name} must be an int", **{name: repr(value)})
    return max(-_I64, min(_I64, value))


_Performed = Tuple[Tuple[bytes, ...], str, bool]
_Item = Tuple[bytes, Optional[int], "asyncio.Future[_Performed]", asyncio.AbstractEventLoop]


def _deliver(pairs: List[Tuple["asyncio.Future[_Performed]", Any]]) -> None:
    for future, result in pairs:
        if future.done():  # the awaiting task was cancelled; the Command may have applied
            continue
        if isinstance(result, BaseException):
            future.set_exception(result)
        else:
            future.set_result(result)


class _Batcher:
    """Runs performs on worker threads, coalescing those awaited concurrently.

    A ``perform`` that finds fewer than ``DRAINERS`` jobs running and nothing queued *leads*:
    it runs on the executor by itself (one hand-off, as ``run_in_executor``) and gets its
    result from that job. Otherwise it queues its bytes and awaits a future. When a job ends
    with Commands queued, it hands its slot to a draining job, which takes up to ``BATCH``
    queued Commands at a time, performs them in one native call (the GIL released once), and
    completes their futures with one ``call_soon_threadsafe`` per batch, until the queue is
    empty. At most ``DRAINERS`` jobs run at once, so two cores apply Commands of different
    Groups in parallel (the engine serializes one Group's Commands).
    """

    BATCH = 64
    DRAINERS = 2

    def __init__(self, native: _native.Core, executor: Optional[Executor]) -> None:
        self._native = native
        self._executor = executor
        self._queue: Deque[_Item] = deque()
        self._lock = threading.Lock()
        self._running = 0

    def _pool(self) -> Executor:
        if self._executor is None:
            # Jobs are handed over from worker threads, so the pool must accept submissions
            # from any thread: the Core's own, not the loop's default executor.
            self._executor = ThreadPoolExecutor(
                max_workers=self.DRAINERS, thread_name_prefix="missionweaveprotocol-core"
            )
        return self._executor

    async def perform(self, raw: bytes, now: Optional[int]) -> _Performed:
        loop = asyncio.get_running_loop()
        with self._lock:
            free = self._running < self.DRAINERS
            lead = free and not self._queue
            if free:
                self._running += 1
            if not lead:
                future: "asyncio.Future[_Performed]" = loop.create_future()
                self._queue.append((raw, now, future, loop))
        if lead:
            return await loop.run_in_executor(self._pool(), self._lead, raw, now)
        if free:  # a free slot and a queue: one more job drains it
            self._pool().submit(self._drain)
        return await future

    def _lead(self, raw: bytes, now: Optional[int]) -> _Performed:
        try:
            return self._native.perform(raw, now)
        finally:
            self._release()

    def _release(self) -> None:
        """Ends a job: hands its slot to a draining job if Commands are queued."""
        with self._lock:
            hand_over = bool(self._queue)
            if not hand_over:
                self._running -= 1
        if hand_over:
            self._pool().submit(self._drain)

    def _drain(self) -> None:
        while True:
            with self._lock:
                if not self._queue:
                    self._running -= 1
                    return
                count = min(self.BATCH, len(self._queue))
                batch = [self._queue.popleft() for _ in range(count)]
            try:
                items = [(raw, now) for raw, now, _, _ in batch]
                results: List[Any] = self._native.perform_timed(items)
            except BaseException as error:  # noqa: BLE001 - every waiter must hear of it
                results = [error] * len(batch)
            by_loop: Dict[asyncio.AbstractEventLoop, List[Tuple[Any, Any]]] = {}
            for (_, _, future, loop), result in zip(batch, results):
                by_loop.setdefault(loop, []).append((future, result))
            for loop, pairs in by_loop.items():
                try:
                    loop.call_soon_threadsafe(_deliver, pairs)
                except RuntimeError:  # the loop was closed meanwhile: nobody is waiting
                    pass


_LIMIT_NAMES = (
    ("maximum_delegation_depth", "maximumDelegationDepth"),
    ("maximum_queued_work_items", "maximumQueuedWorkItems"),
    ("maximum_active_work_items", "maximumActiveWorkItems"),
    ("maximum_unresolved_clarifications", "maximumUnresolvedClarifications"),
    ("maximum_message_rate_per_minute", "maximumMessageRatePerMinute"),
    ("maximum_proposal_rate_per_minute", "maximumProposalRatePerMinute"),
    ("maximum_clarification_rate_per_minute", "maximumClarificationRatePerMinute"),
)


def _cooperation_limits(limits: Optional[object]) -> Optional[Dict[str, object]]:
    """§20 limits from any object with the reference's ``CooperationLimits`` attributes: each
    attribute present is passed on (an ``int``, or ``None`` for no limit); the core keeps its
    default for each one absent."""
    if limits is None:
        return None
    return {
        camel: getattr(limits, snake)
        for snake, camel in _LIMIT_NAMES
        if hasattr(limits, snake)
    }


def _offline_limits(limits: Optional[object]) -> Optional[Tuple[int, int, object]]:
    """§11.5 Core-side bounds per historical lease from an ``offline.OfflineLimits`` (or any
    object with its attributes); ``None`` keeps the core's defaults (one hour, 64 Commands, no
    usage cap beyond the budget ledger). The core checks the bounds."""
    if limits is None:
        return None
    names = ("max_disconnect_grace", "max_actions", "max_usage")
    missing = [n for n in names if not hasattr(limits, n)]
    if missing:
        raise TypeError("offline_limits needs the OfflineLimits attributes " + ", ".join(missing))
    grace = getattr(limits, "max_disconnect_grace")
    if not isinstance(grace, timedelta):
        raise TypeError("offline_limits.max_disconnect_grace must be a timedelta")
    return (grace // timedelta(milliseconds=1), getattr(limits, "max_actions"),
            getattr(limits, "max_usage"))


class Core:
    """The authoritative core (the reference's ``Core``) over a store of
    :mod:`~missionweaveprotocol.store`: an :class:`InMemoryStore`, or an initialized
    :class:`~missionweaveprotocol.store.SQLStore` (``SQLiteStore``, ``PostgreSQLStore``).

    ``Core(store, *, clock=None, cooperation_limits=None, snapshot_authority_key_id=None,
    snapshot_authority_public_key=None, registry, authority_key, authority, max_future_skew,
    max_age, event_id_prefix=None, executor=None)``.

    Unlike the reference, **the Core verifies every Command's signature** (reference gap §7.1):
    :meth:`perform` runs the six-stage verifier (Command profile) against ``registry``, then
    the freshness window of ``issuedAt`` (``max_future_skew``, ``max_age``; §6.4), then signer
    authorization, before the engine decides. A Command without a signature is refused
    (``InvalidCommand``, wire ``SCHEMA_VALIDATION_FAILED``: the Command schema requires one); a
    forged, altered, wrongly keyed or stale one ``AuthorizationDenied``
    (``AUTH_INVALID_SIGNATURE``). Nothing is applied in either case.

    Our keyword-only arguments beyond the reference's (each with a default, so that the
    reference's ``Core(store, *, clock=…)`` works as written):

    - ``registry``: the Organization's Registry evidence (an ``AgentRegistryKeyResolver`` or
      its bytes) every Command is verified against; default: a Registry of Organization
      :data:`DEFAULT_ORGANIZATION` binding only ``authority_key`` (no other signer verifies);
    - ``authority_key`` and ``authority``: the Group Authority's signing key and Principal; every
      Event is a normative signed document signed with this key, so ``registry`` must bind the
      key to ``authority`` for receivers to verify Events; defaults: a fresh key
      (``SigningKey.generate``) with key ID :data:`DEFAULT_AUTHORITY_KEY_ID` (the reference
      gateway's) and the service :data:`DEFAULT_AUTHORITY` (attributes ``authority_key``,
      ``authority``);
    - ``max_future_skew`` / ``max_age``: the freshness window (default 30 s / 5 min);
    - ``event_id_prefix``: deterministic Event IDs ``<prefix>1, 2, …`` (tests); by default
      ``urn:uuid:`` v4 IDs from OS randomness;
    - ``executor``: where the engine runs (default: a pool of two threads owned by the Core).
      Awaiting never blocks the event loop: the engine runs on a worker thread with the GIL
      released; performs awaited concurrently are coalesced into batches (at most two jobs
      run at once, so two cores apply Commands of different Groups in parallel).

    - ``bootstrap_services``: the service Principals (IDs) that may send the Organization
      bootstrap Commands ``…identity.session_open`` and ``…registry.agent_card_register``
      (default: ``authority.id``, the Group Authority opening sessions after HELLO, §6.3);
    - ``policy_services``: the services that may sign the Group kinds Organization policy may
      send (``mission.cancel``, ``mission.terminate``, ``work.cancel``, …; default none).

    ``cooperation_limits`` (§20) is any object with the reference's ``CooperationLimits``
    attributes ``maximum_queued_work_items``, ``maximum_active_work_items`` and
    ``maximum_proposal_rate_per_minute`` (an ``int``, or ``None`` for no limit); ``None`` keeps
    the reference's defaults (100, 4, 30). A limit refuses the new transition with
    ``PolicyViolation`` (wire ``RATE_LIMITED``, ``details["retry_after_ms"]`` for the rate).
    The snapshot-authority pair (both or neither, ``ValueError`` otherwise, as the reference)
    names the key Group Snapshots must be signed with for ``…core.group_archive`` (§7.4). The
    engine accepts only snapshots created by the Group Authority (the archival service whose key
    signs the Group's Events), so a given pair must be ``authority_key``'s key ID and public key;
    another key is a ``ValueError`` here rather than snapshots refused later.

    Signers are authorized by the Organization authorizer (the kind-by-actor-type rules:
    bootstrap and policy services, human-only and Agent-only kinds) and the engine enforces each
    transition's authority column (MissionOwner, current Coordinator, offered Agent, owner) and
    every epoch fence, including the Agent's Session Epoch (an Agent without an opened session
    is ``AuthorizationDenied``, wire ``AUTH_REQUIRED``).
    """

    def __init__(
        self,
        store: Union[InMemoryStore, SQLStore],
        *,
        clock: Optional[Clock] = None,
        cooperation_limits: Optional[object] = None,
        snapshot_authority_key_id: Optional[str] = None,
        snapshot_authority_public_key: Optional[Union[str, bytes]] = None,
        registry: Optional[Union[AgentRegistryKeyResolver, bytes]] = None,
        authority_key: Optional[SigningKey] = None,
        authority: Optional[Principal] = None,
        max_future_skew: timedelta = timedelta(seconds=30),
        max_age: timedelta = timedelta(minutes=5),
        event_id_prefix: Optional[str] = None,
        executor: Optional[Executor] = None,
        bootstrap_services: Optional[Sequence[str]] = None,
        policy_services: Sequence[str] = (),
        offline_limits: Optional[object] = None,
    ) -> None:
        if not isinstance(store, (InMemoryStore, SQLStore)):
            raise TypeError(
                f"store must be an InMemoryStore or an SQLStore, not {type(store).__name__}"
            )
        # The reference's call shape ``Core(store, *, clock=…)`` works as written: the Group
        # Authority defaults to a fresh key under the reference's gateway key ID, and the
        # Registry to one binding only that key (so only the authority's own Commands verify
        # until a Registry with the Organization's keys is given).
        if authority is None:
            authority = Principal.service(DEFAULT_AUTHORITY)
        if authority_key is None:
            authority_key = SigningKey.generate(DEFAULT_AUTHORITY_KEY_ID)
        if registry is None:
            registry = (
                _native.RegistryBuilder(DEFAULT_ORGANIZATION)
                .add_key(
                    authority_key.key_id,
                    (str(authority.type), authority.id),
                    authority_key.public_key_bytes,
                    "1970-01-01T00:00:00Z",
                )
                .build()
            )
        self.authority = authority
        self.authority_key = authority_key
        self._store = store
        self._clock = clock
        self._executor = executor
        self.snapshot_authority_key_id = snapshot_authority_key_id
        self.snapshot_authority_public_key = snapshot_authority_public_key
        # Every set-up rule (the authority key bound in the Registry, the snapshot authority,
        # Event IDs, the limits' defaults) is the core's `CoreConfig`; this only converts.
        options: Dict[str, object] = {
            "authority": {"type": str(authority.type), "id": authority.id},
            "eventIdPrefix": event_id_prefix,
            "maxFutureSkewMs": max(0, max_future_skew // timedelta(milliseconds=1)),
            "maxAgeMs": max(0, max_age // timedelta(milliseconds=1)),
            "bootstrapServices": None if bootstrap_services is None else list(bootstrap_services),
            "policyServices": list(policy_services),
            "cooperationLimits": _cooperation_limits(cooperation_limits),
            "snapshotAuthorityKeyId": snapshot_authority_key_id,
            "snapshotAuthorityPublicKey": (
                None
                if snapshot_authority_public_key is None
                else encode_public_key(snapshot_authority_public_key)
            ),
        }
        self._native = _native.Core(
            store._native,
            registry,
            authority_key,
            json.dumps(options),
            _offline_limits(offline_limits),
        )
        self._batcher = _Batcher(self._native, executor)

    @property
    def store(self) -> Union[InMemoryStore, SQLStore]:
        return self._store

    def _now_ms(self) -> Optional[int]:
        if self._clock is None:
            return None  # the core reads the system clock
        now = self._clock()
        if now.tzinfo is None or now.utcoffset() is None:
            raise RuntimeError("the Core's clock must return timezone-aware datetimes")
        return (now - _EPOCH) // timedelta(milliseconds=1)

    @staticmethod
    def _wire(command: object) -> bytes:
        if isinstance(command, Command):
            return command.wire_bytes()
        if isinstance(command, (bytes, bytearray, memoryview)):
            return bytes(command)
        raise _argument_error(
            "not_a_command",
            f"perform takes a models.Command or wire bytes, not {type(command).__name__}",
        )

    async def perform_all(self, command: CommandLike) -> Tuple[Event, ...]:
        """Every Event the Command produced, in Group order (``mission.cancel`` also closes the
        Mission's WorkItems); for a duplicate, its original first Event."""
        events, _group, _duplicate = await self._batcher.perform(
            self._wire(command), self._now_ms()
        )
        return tuple(Event._over_signed_bytes(event) for event in events)

    async def perform(self, command: CommandLike) -> Event:
        """Verifies, then applies one signed Command atomically; returns its (first) Event.

        ``command`` is a :class:`~missionweaveprotocol.models.Command` (performed with its
        exact signed bytes when it was made from them, else dumped to its wire JSON by alias
        without ``None`` members) or raw wire bytes. Dedup by (actor, Action ID) with the
        verified signing hash: the same signed Command returns its first Event again; other
        content under the same Action ID is :class:`ActionIdCollision` (§15.1).
        """
        events, _group, _duplicate = await self._batcher.perform(
            self._wire(command), self._now_ms()
        )
        return Event._over_signed_bytes(events[0])

    async def query(self, query: Query) -> QueryResult:
        """The entity's normative document (see :class:`~missionweaveprotocol.models.QueryResult`);
        :class:`NotFound` if absent; kinds the engine does not serve yet are
        :class:`InvalidCommand` with reason ``query_kind_not_served`` and the reason why."""
        now = self._now_ms()
        loop = asyncio.get_running_loop()
        actor = None if query.actor_type is None else str(query.actor_type)
        value = await loop.run_in_executor(
            self._executor,
            self._native.query,
            str(query.kind),
            query.entity_id,
            query.group_id,
            actor,
            now,
        )
        return QueryResult(kind=query.kind, entity_id=query.entity_id, value=value)

    async def replay(self, group_id: str, *, after: int = 0, limit: int = 1000) -> Tuple[Event, ...]:
        """Up to ``limit`` Events of ``group_id`` after sequence ``after``, in order.

        :class:`InvalidCommand` if ``after < 0`` or ``limit`` is not in ``1..10000``;
        :class:`NotFound` for an unknown Group. Continue with ``after`` = the last returned
        sequence (:meth:`replay_page` also returns the continuation cursor).
        """
        events, _continuation, _last = await self._replay(group_id, after, limit)
        return events

    async def replay_page(
        self, group_id: str, *, after: int = 0, limit: int = 1000
    ) -> Tuple[Tuple[Event, ...], Optional[int], int]:
        """``(events, continuation, last_sequence)``: ``continuation`` is the cursor to pass as
        ``after`` while more Events follow, ``None`` once the page reaches the head."""
        return await self._replay(group_id, after, limit)

    async def _replay(
        self, group_id: str, after: int, limit: int
    ) -> Tuple[Tuple[Event, ...], Optional[int], int]:
        after_, limit_ = _clamp(after, "after"), _clamp(limit, "limit")
        loop = asyncio.get_running_loop()
        raw, continuation, last = await loop.run_in_executor(
            self._executor, self._native.replay, group_id, after_, limit_
        )
        return tuple(Event._over_signed_bytes(e) for e in raw), continuation, last


__all__ = [
    "DEFAULT_AUTHORITY",
    "DEFAULT_AUTHORITY_KEY_ID",
    "DEFAULT_ORGANIZATION",
    "ActionIdCollision",
    "AlreadyExists",
    "AuthorizationDenied",
    "BudgetExceeded",
    "Clock",
    "Core",
    "DependencyError",
    "ErrorCode",
    "InvalidCommand",
    "InvalidTransition",
    "LeaseExpired",
    "MissionWeaveProtocolError",
    "NotFound",
    "PolicyViolation",
    "RevisionConflict",
    "StaleCoordinatorEpoch",
    "StaleMembershipEpoch",
    "StaleOwnershipEpoch",
    "StaleSessionEpoch",
    "StoreError",
]
