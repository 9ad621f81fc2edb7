"""Compact payload → wire payload: the one explicit translation behind
``Command(kind=…, payload=CreateMissionPayload(…))`` (issue 25, "the rule for compact models").

One signing scheme (§6.4): what is signed is always the normative wire Command. A Command
built with a compact payload model keeps the model and is converted here whenever its wire form
is needed (:meth:`Command.to_wire`, ``signing_payload``, ``HumanIdentity.sign``,
``SignedDocumentCodec.sign``, ``Core.perform``).

Per kind, a compact field maps to a wire member by one :class:`~._conversions.Row` (the same
row type the projections use, read both ways):

- a field with no row whose camelCase name is a payload member of the kind (the engine's table,
  ``_native.payload_members``) maps to it unchanged (``plain``: enums by value, instants by the
  core's renderer, models by alias);
- a row with a ``write`` converts (budgets by the engine's budget writer, text by parts, …);
- a row without ``write`` is *lossy*: the compact form does not carry the wire member (a
  Definition of Done criterion is an object with an ID on the wire, a string here). The caller
  supplies it in ``supplement`` (wire members, camelCase, merged into the payload); when the
  row has a ``read``, the supplied member must read back to the compact value
  (``reason="conflict"``);
- a compact field with no wire member at all is refused unless it holds its default
  (``reason="not-representable"``), except the Mission ``title`` (the normative Mission has
  none; it is dropped, ``docs/switching.md``).

Then every member the engine's table marks required must be present: otherwise
:class:`CompactPayloadError` names it (``member="/payload/<name>"``). Nothing is invented.
"""

from __future__ import annotations

import copy
from typing import Any, Callable, Dict, Mapping, Optional, Tuple

from pydantic import BaseModel

from . import _native
from ._conversions import (
    _MISSING,
    Row,
    _capabilities,
    _capability_refs,
    _contract,
    _contract_document,
    _delegation_budget,
    _delegation_budget_document,
    _descriptions,
    _get,
    _mention_ids,
    _principal,
    _set,
    _single_role,
    _text,
    _text_parts,
    budget_document,
    budget_limits,
    instant,
)
from .documents import DocumentMappingError

Document = Dict[str, Any]

#: A lossy row whose supplied member is not read back (no exact compact reading exists).
_UNCHECKED: Callable[[Any], Any] = lambda raw: raw  # noqa: E731


class CompactPayloadError(DocumentMappingError):
    """A compact payload that cannot become its wire payload: ``member`` names the wire
    member (``/payload/…``); ``reason`` is ``missing_member`` (the engine's reason for the same
    gap), ``conflict`` (a supplied member disagrees with the compact field) or
    ``not-representable``. Wire code ``INVALID_COMMAND``."""

    def __init__(self, message: str, *, reason: str, member: str) -> None:
        super().__init__(message, code="INVALID_COMMAND", reason=reason, member=member)


def _write_model(value: Any, _source: Any) -> Any:
    return value.protocol_document()


def _lossy(field: str, *path: str, read: Callable[[Any], Any] = _UNCHECKED) -> Row:
    return Row(field, tuple(path), read, None)


def _lease(field: str) -> Row:
    return Row(field, ("leaseId",))


_CREATION = (
    Row("coordinator_id", ("coordinator", "agentId")),
    _lossy("definition_of_done", "definitionOfDone", read=_descriptions),
    Row("budget", ("budget",), budget_limits, budget_document),
    Row("deadline", ("deadline",), instant),
)
_CONTRACT = (
    Row("contract", ("contract",), _contract, _contract_document),
    Row("dependency_ids", ("contract", "dependencyWorkItemIds"), tuple),
)
_AMENDMENT = (
    Row("amendment_id", ("messageId",)),
    Row("message_id", ("targetMessageId",)),
    Row("replacement_content", ("content",), _text, _text_parts),
)

#: The explicit rows of each wire kind (every other field maps by its camelCase name).
ROWS: Dict[str, Tuple[Row, ...]] = {
    "ext.missionweaveprotocol.registry.agent_card_register": (_lossy("card", "agentCard"),),
    "mission.create": _CREATION,
    # A follow-up is its own kind: on ``mission.create`` the field is not representable.
    "mission.create_follow_up": _CREATION
    + (Row("follow_up_of_mission_id", ("followUpToMissionId",)),),
    "mission.create_child": _CREATION,
    "membership.change": (
        Row("principal", ("member",), _principal),
        Row("roles", ("role",), lambda raw: (raw,), _single_role),
        Row("visibility_after_sequence", ("visibilityStartSequence",)),
    ),
    "membership.end": (Row("principal", ("member",), _principal),),
    "membership.grant_delegation": (
        Row("allowed_capabilities", ("allowedCapabilities",), _capabilities, _capability_refs),
        Row("budget", ("budget",), _delegation_budget, _delegation_budget_document),
        Row("expires_at", ("expiresAt",), instant),
    ),
    "mission.assign_coordinator": (Row("coordinator_id", ("agentId",)),),
    "message.post": (
        Row("content", ("content",), _text, _text_parts),
        _lossy("mentions", "mentions", read=_mention_ids),
    ),
    "message.correct": _AMENDMENT,
    "message.redact": _AMENDMENT,
    "message.retract": _AMENDMENT[:2],
    "work.propose": _CONTRACT,
    "work.authorize": _CONTRACT,
    "work.offer": (
        _lossy("candidate_agent_ids", "candidates",
               read=lambda raw: tuple(c["agentId"] for c in raw)),
        _lossy("selection_basis", "selectionBasis"),
    ),
    "work.accept_offer": (Row("ownership_lease_seconds", ("leaseSeconds",)),),
    "work.start": (Row("execution_lease_seconds", ("leaseSeconds",)),),
    "ext.missionweaveprotocol.core.work_execution_lease_renew": (_lease("execution_lease_id"),),
    "ext.missionweaveprotocol.core.resource_usage_record": (
        _lease("execution_lease_id"),
        _lossy("usage_delta", "usageDelta"),
    ),
    "work.checkpoint": (_lease("execution_lease_id"), _lossy("checkpoint", "checkpoint")),
    "work.block": (
        _lease("execution_lease_id"),
        _lossy("checkpoint", "checkpoint"),
        Row("blocked_lease_seconds", ("leaseSeconds",)),
    ),
    "artifact.publish": (
        Row("artifact", ("manifest",), _UNCHECKED, _write_model),
        _lease("execution_lease_id"),
    ),
    "work.submit": (
        _lease("execution_lease_id"),
        _lossy("artifact_ids", "artifactHashes"),
        _lossy("evidence", "evidence"),
    ),
    "work.accept_result": (_lossy("evidence", "evidence"),),
    "work.fail": (_lease("execution_lease_id"),),
    "approval.grant_execution": (
        Row("budget", ("budget",), budget_limits, budget_document),
    ),
    "policy.grant_cooperation_override": (
        Row("beneficiary", ("beneficiary",), _principal),
        Row("expires_at", ("expiresAt",), instant),
    ),
    "ext.missionweaveprotocol.core.group_archive": (_lossy("snapshot", "snapshot"),),
}

#: Compact fields with no wire member that are dropped whatever they hold.
DROPPED = {"mission.create": {"title"}, "mission.create_follow_up": {"title"},
           "mission.create_child": {"title"}}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _pointer(path: Tuple[str, ...]) -> str:
    return "/payload/" + "/".join(path)


def _default(model: BaseModel, field: str) -> Any:
    info = type(model).model_fields[field]
    return info.get_default(call_default_factory=True)


def wire_payload(
    kind: str, compact: BaseModel, supplement: Optional[Mapping[str, Any]] = None
) -> Document:
    """The wire payload of ``compact`` for the Command kind ``kind`` (see the module
    docstring); ``supplement`` carries the wire members the compact form lacks."""
    members = _native.payload_members(kind)
    if members is None:
        raise CompactPayloadError(
            f"{kind}: the engine implements no such Command kind", reason="unknown-kind",
            member="/kind",
        )
    names = {name for name, _required in members}
    payload: Document = copy.deepcopy(dict(supplement or {}))
    rows = {row.field: row for row in ROWS.get(kind, ())}
    what = type(compact).__name__
    for field in type(compact).model_fields:
        value = getattr(compact, field)
        row = rows.get(field)
        if row is None:
            if _camel(field) not in names:
                if field in DROPPED.get(kind, ()) or value == _default(compact, field):
                    continue
                raise CompactPayloadError(
                    f"{what}.{field} = {value!r} has no member in the wire payload of {kind}",
                    reason="not-representable", member=_pointer((_camel(field),)),
                )
            row = Row(field, (_camel(field),))
        raw = _get(payload, row.path)
        if row.write is None:
            if raw is _MISSING:  # missing
                if value in (None, ()):
                    continue
                raise CompactPayloadError(
                    f"{what}.{field}: the compact form does not carry the wire member "
                    f"{_pointer(row.path)} of {kind}; pass it in the supplement",
                    reason="missing_member", member=_pointer(row.path),
                )
            if row.read is not _UNCHECKED and row.read(raw) != value:
                raise CompactPayloadError(
                    f"{what}.{field}: the supplied {_pointer(row.path)} reads "
                    f"{row.read(raw)!r}, not {value!r}",
                    reason="conflict", member=_pointer(row.path),
                )
            continue
        if value is None:
            continue
        try:
            written = row.write(value, None if raw is _MISSING else raw)
        except DocumentMappingError as error:
            member = _pointer(row.path) + (error.member or "")
            raise CompactPayloadError(
                f"{what}.{field}: {error}", reason=error.reason or "schema-invalid",
                member=member,
            ) from error
        _set(payload, row.path, written)
    for name, required in members:
        if required and name not in payload:
            raise CompactPayloadError(
                f"{what} lacks the wire member /payload/{name} that {kind} requires; pass it "
                "in the supplement",
                reason="missing_member", member=f"/payload/{name}",
            )
    return payload


def is_compact(payload: object) -> bool:
    """Whether ``payload`` is one of the reference's compact payload models."""
    from ._compact_payloads import PAYLOAD_MODELS

    return isinstance(payload, tuple(set(PAYLOAD_MODELS.values())))


__all__ = ["CompactPayloadError", "DROPPED", "ROWS", "is_compact", "wire_payload"]

