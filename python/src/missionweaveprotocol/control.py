"""The signed human control interface (the reference's ``control.py``,
``reference-python.md`` §1.6): Mission-level operations of a human MissionOwner, each a
Command signed with the human's key and performed on :class:`~missionweaveprotocol.core.Core`,
returning the Command and the accepted Event.

The Commands are built by the Rust core (``missionweaveprotocol_engine::control``) from the
operation's arguments and the projections queried here; this module queries, signs and
performs, and decides nothing. Differences from the reference, each deliberate:

- Commands are **normative wire documents** signed with the §6.4 codec
  (:class:`~missionweaveprotocol.signed_documents.SignedDocumentCodec`), not
  ``sign_canonical`` over a dump with ``null`` members (reference gap §7.2). The Core verifies
  them against its Registry, so the human's key must be bound there (a wrong key is
  :class:`~missionweaveprotocol.core.AuthorizationDenied`).
- ``request_changes``/``approve`` bind the submitted revision and Artifact set read from the
  Group's ``mission.submitted_for_approval`` Event; the Mission Commands carry
  ``expectedRevision`` and the engine honours it (gap §7.17).
- ``direct`` sends the content unchanged: no trimming, no 512-character limit (gap §7.18).
- ``create``'s ``title`` and ``permissions`` have no member in ``mission.schema.json``; they
  travel in the noncritical extension ``urn:missionweaveprotocol:extension:human-control-create``,
  relayed into the Event. A budget is required (§12: budgets are mandatory).
- ``approve`` returns the signed Approval Decision document (``approval.schema.json``, signed
  by the human), ``approve_execution`` the stored Execution Approval document; both are plain
  ``dict`` documents, not the reference's compact models.
- The Core does not store Commands (``QueryKind.COMMAND`` is not served), so
  :meth:`HumanControl.accepted_command` answers for the Commands this object performed.

Refusals of the interface itself (nothing submitted, a missing budget, a bad argument) are
:class:`~missionweaveprotocol.errors.InvalidInputError`, a ``ValueError`` as the reference's.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from . import _native
from .core import Clock, Core, NotFound
from .crypto import SigningKey
from .models import Command, Event, Principal, Query, QueryKind, render_timestamp
from .signed_documents import SignedDocumentCodec
from ._types import SignedDocumentKind

Document = Dict[str, Any]
"""A JSON document: a queried projection, an Approval."""


@dataclass(frozen=True)
class HumanIdentity:
    """A human's signing identity: ``private_key``/``public_key`` are unpadded base64url (the
    32-byte seed and the public key); ``key_id`` is the Registry key ID that binds the key to
    ``human_id``."""

    human_id: str
    private_key: str = field(repr=False)
    public_key: str
    key_id: str

    @classmethod
    def generate(cls, human_id: str, *, key_id: Optional[str] = None) -> "HumanIdentity":
        """A fresh key (seed from ``os.urandom``); the key ID defaults to
        ``"<human_id>:signing-key"``."""
        key_id = key_id if key_id is not None else _native.control_default_key_id(human_id)
        key = SigningKey.generate(key_id)
        return cls(human_id, key.to_base64url(), key.public_key, key_id)

    @property
    def principal(self) -> Principal:
        return Principal.human(self.human_id)

    def signing_key(self) -> SigningKey:
        """The native signing key."""
        return SigningKey(self.key_id, self.private_key)

    def sign(self, command: Command, *, supplement: Optional[Mapping[str, Any]] = None) -> Command:
        """``command`` signed with this key (§6.4 Command profile), as a Command keeping its
        signed bytes. A Command with a compact payload model is signed as its wire form
        (:meth:`Command.to_wire`); ``supplement`` gives the wire members the compact form
        lacks (a missing one is ``CompactPayloadError`` naming it, before anything is
        signed)."""
        return self._sign_document(command.signing_payload(supplement))

    def _sign_document(self, unsigned: Mapping[str, Any]) -> Command:
        signed = SignedDocumentCodec().sign(SignedDocumentKind.COMMAND, dict(unsigned), self.signing_key())
        return Command.from_wire(signed.canonical_document_bytes)

    def verify(self, command: Command) -> bool:
        """Whether ``command`` carries a valid signature by this key (no Registry: the Core
        checks Registry evidence when it performs the Command)."""
        raw = command.signed_bytes
        document = _native.parse_json(raw) if raw is not None else command.to_wire()
        public = _native.key_bytes(self.public_key, "public key")
        return _native.control_verify(document, self.key_id, public)


@dataclass(frozen=True)
class ControlReceipt:
    """A performed control operation: the signed Command and its (first) Event."""

    command: Command
    event: Event


@dataclass(frozen=True)
class MissionInspection:
    """What the MissionOwner sees: the Mission and Group documents, the Mission's WorkItem
    documents and the Group's Events in order."""

    mission: Document
    group: Document
    work_items: Tuple[Document, ...]
    events: Tuple[Event, ...]


def _principal(value: Union[Principal, Mapping[str, Any]]) -> Document:
    if isinstance(value, Principal):
        return {"type": str(value.type), "id": value.id}
    return dict(value)


class HumanControl:
    """``HumanControl(core, identity, *, clock=None, action_id_factory=None)``: the
    MissionOwner's operations on ``core``, signed by ``identity``. Action IDs default to
    ``human-action:<uuid4>``; ``clock`` (aware datetimes) stamps ``issuedAt``."""

    def __init__(
        self,
        core: Core,
        identity: HumanIdentity,
        *,
        clock: Optional[Clock] = None,
        action_id_factory: Optional[Callable[[], str]] = None,
    ) -> None:
        self.core = core
        self.identity = identity
        self._clock = clock
        self._action_ids = action_id_factory
        self._accepted: Dict[str, Command] = {}

    # -- queries ----------------------------------------------------------------------------

    def _issued_at(self) -> str:
        now = self._clock() if self._clock is not None else datetime.now(timezone.utc)
        if now.tzinfo is None or now.utcoffset() is None:
            raise RuntimeError("the HumanControl clock must return timezone-aware datetimes")
        return render_timestamp(now)

    def _action_id(self) -> str:
        if self._action_ids is not None:
            return self._action_ids()
        return f"human-action:{uuid.uuid4()}"

    async def _query(self, kind: QueryKind, entity_id: str, **extra: Any) -> Any:
        return (await self.core.query(Query(kind=kind, entity_id=entity_id, **extra))).value

    async def _optional(self, kind: QueryKind, entity_id: str, **extra: Any) -> Any:
        try:
            return await self._query(kind, entity_id, **extra)
        except NotFound:
            return None

    async def _events(self, group_id: str) -> Tuple[Event, ...]:
        events: List[Event] = []
        after = 0
        while True:
            page, continuation, _last = await self.core.replay_page(
                group_id, after=after, limit=1000
            )
            events.extend(page)
            if continuation is None:
                return tuple(events)
            after = continuation

    async def _request(
        self,
        operation: str,
        args: Mapping[str, Any],
        mission_id: Optional[str] = None,
        *,
        events: bool = False,
        coordinator: Optional[str] = None,
    ) -> Document:
        request: Document = {
            "operation": operation,
            "humanId": self.identity.human_id,
            "actionId": self._action_id(),
            "issuedAt": self._issued_at(),
            "args": dict(args),
        }
        if mission_id is not None:
            mission = await self._query(QueryKind.MISSION, mission_id)
            group_id = mission["groupId"]
            request["mission"] = mission
            request["group"] = await self._query(QueryKind.GROUP, group_id)
            request["membership"] = await self._optional(
                QueryKind.MEMBERSHIP, self.identity.human_id, group_id=group_id,
                actor_type="human",
            )
            if events:
                request["events"] = [
                    _native.parse_json(e.signed_bytes) for e in await self._events(group_id)
                ]
        if coordinator is not None:
            request["coordinatorCard"] = await self._optional(QueryKind.AGENT_CARD, coordinator)
        return request

    async def _perform(self, request: Document) -> ControlReceipt:
        unsigned = _native.control_command(request)
        command = self.identity._sign_document(unsigned)
        event = await self.core.perform(command)
        self._accepted[event.id] = command
        return ControlReceipt(command=command, event=event)

    # -- operations -------------------------------------------------------------------------

    async def create(
        self,
        *,
        mission_id: str,
        group_id: str,
        coordinator_id: str,
        title: str,
        objective: str,
        definition_of_done: Sequence[Union[str, Mapping[str, Any]]],
        deadline: Union[datetime, str],
        budget: Optional[Mapping[str, Any]] = None,
        permissions: Sequence[str] = (),
        coordinator_lease_seconds: int = 300,
        main_conversation_id: Optional[str] = None,
        approval_policy: Optional[Mapping[str, Any]] = None,
        coordinator_lease_id: Optional[str] = None,
    ) -> ControlReceipt:
        """``mission.create``: the human becomes MissionOwner; ``budget`` is a
        ``common.schema.json#/$defs/budget`` object (required); a plain-text criterion of
        ``definition_of_done`` becomes an acceptance criterion needing ``human_review``."""
        args = {
            "missionId": mission_id,
            "groupId": group_id,
            "coordinatorId": coordinator_id,
            "title": title,
            "objective": objective,
            "definitionOfDone": [c if isinstance(c, str) else dict(c) for c in definition_of_done],
            "deadline": render_timestamp(deadline) if isinstance(deadline, datetime) else deadline,
            "budget": None if budget is None else dict(budget),
            "permissions": list(permissions),
            "coordinatorLeaseSeconds": coordinator_lease_seconds,
            "mainConversationId": main_conversation_id,
            "approvalPolicy": None if approval_policy is None else dict(approval_policy),
            "coordinatorLeaseId": coordinator_lease_id,
        }
        return await self._perform(await self._request("create", args, coordinator=coordinator_id))

    async def inspect(self, mission_id: str) -> MissionInspection:
        """The Mission, its Group, its WorkItems and the Group's Events (``NotFound`` for an
        unknown Mission)."""
        mission = await self._query(QueryKind.MISSION, mission_id)
        group = await self._query(QueryKind.GROUP, mission["groupId"])
        items = await self._query(QueryKind.MISSION_WORK_ITEMS, mission_id)
        events = await self._events(mission["groupId"])
        return MissionInspection(mission=mission, group=group, work_items=tuple(items),
                                 events=events)

    async def direct(
        self,
        mission_id: str,
        content: Union[str, Sequence[Mapping[str, Any]]],
        *,
        conversation_id: Optional[str] = None,
        message_id: Optional[str] = None,
        mentions: Sequence[Union[Principal, Mapping[str, Any]]] = (),
    ) -> ControlReceipt:
        """``message.post`` (to the Group's main Conversation unless ``conversation_id``); a
        Message informs, it never authorizes (§4 invariant 2)."""
        args = {
            "content": content if isinstance(content, str) else [dict(p) for p in content],
            "conversationId": conversation_id,
            "messageId": message_id,
            "mentions": [_principal(m) for m in mentions],
        }
        return await self._perform(await self._request("direct", args, mission_id))

    async def request_changes(
        self, mission_id: str, feedback: str, *, mission_revision: Optional[int] = None
    ) -> ControlReceipt:
        """``mission.request_changes`` of the submitted revision (``ValueError`` when nothing
        is submitted)."""
        args = {"feedback": feedback, "missionRevision": mission_revision}
        request = await self._request("request_changes", args, mission_id,
                                      events=mission_revision is None)
        return await self._perform(request)

    async def approve(
        self,
        mission_id: str,
        *,
        approval_id: Optional[str] = None,
        mission_revision: Optional[int] = None,
        artifact_hashes: Optional[Sequence[str]] = None,
        acceptance_policy_version: str = "1.0.0",
        comments: Optional[str] = None,
    ) -> Tuple[ControlReceipt, Document]:
        """``mission.approve`` of the submitted revision and Artifact set (``ValueError`` when
        nothing is submitted); returns the receipt and the signed Approval Decision."""
        args = {
            "approvalId": approval_id,
            "missionRevision": mission_revision,
            "artifactHashes": None if artifact_hashes is None else list(artifact_hashes),
            "acceptancePolicyVersion": acceptance_policy_version,
            "comments": comments,
        }
        request = await self._request(
            "approve", args, mission_id,
            events=mission_revision is None or artifact_hashes is None,
        )
        receipt = await self._perform(request)
        unsigned = _native.control_approval({
            "command": receipt.command.to_wire(),
            "event": _native.parse_json(receipt.event.signed_bytes),
            "mission": request["mission"],
        })
        approval = SignedDocumentCodec().sign(SignedDocumentKind.APPROVAL, unsigned, self.identity.signing_key())
        return receipt, approval.document

    async def approve_execution(
        self,
        mission_id: str,
        *,
        work_item_id: str,
        ownership_epoch: int,
        operations: Sequence[str],
        resources: Sequence[str] = (),
        budget: Optional[Mapping[str, Any]] = None,
        expires_in_seconds: int = 300,
        approval_id: Optional[str] = None,
        comments: Optional[str] = None,
    ) -> Tuple[ControlReceipt, Document]:
        """``approval.grant_execution`` for one WorkItem Ownership Epoch (§12); returns the
        receipt and the Execution Approval the Core stored."""
        args = {
            "workItemId": work_item_id,
            "ownershipEpoch": ownership_epoch,
            "operations": list(operations),
            "resources": list(resources),
            "budget": None if budget is None else dict(budget),
            "expiresInSeconds": expires_in_seconds,
            "approvalId": approval_id,
            "comments": comments,
        }
        receipt = await self._perform(await self._request("approve_execution", args, mission_id))
        stored = await self._query(QueryKind.EXECUTION_APPROVAL,
                                   receipt.command.payload["approvalId"])
        return receipt, stored

    async def cancel(self, mission_id: str, reason: str) -> ControlReceipt:
        """``mission.cancel`` (its unfinished WorkItems are cancelled with it)."""
        return await self._perform(await self._request("cancel", {"reason": reason}, mission_id))

    async def replace_coordinator(
        self,
        mission_id: str,
        coordinator_id: str,
        *,
        lease_seconds: int = 300,
        agent_card_version: Optional[int] = None,
        lease_id: Optional[str] = None,
    ) -> ControlReceipt:
        """``mission.assign_coordinator``: the next Coordinator Epoch fences the replaced
        Coordinator at once (§7.2)."""
        args = {
            "coordinatorId": coordinator_id,
            "leaseSeconds": lease_seconds,
            "agentCardVersion": agent_card_version,
            "leaseId": lease_id,
        }
        request = await self._request("replace_coordinator", args, mission_id,
                                      coordinator=coordinator_id)
        return await self._perform(request)

    async def accepted_command(self, event_id: str) -> Command:
        """The Command this object performed whose Event is ``event_id`` (``NotFound``
        otherwise)."""
        command = self._accepted.get(event_id)
        if command is None:
            raise NotFound(f"no Command of this HumanControl produced Event {event_id}",
                           event_id=event_id)
        return command


__all__ = [
    "ControlReceipt",
    "Document",
    "HumanControl",
    "HumanIdentity",
    "MissionInspection",
]
