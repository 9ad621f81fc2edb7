"""Normative document ↔ compact projection: ``Mission.from_document(doc)`` and
``mission.protocol_document()`` (the reference's ``documents.py`` adapters, for state).

Our :class:`~missionweaveprotocol.core.Core` answers queries with the normative documents
(``mission.schema.json``, ``group.schema.json``, ``membership.schema.json``,
``work-item.schema.json``); the reference's code reads compact projections. Each projection
kind has one table of rows here — projection field ↔ document member — read in both
directions, so every mapping is written once:

- **timestamps** are read by the core's RFC 3339 parser (``parse_timestamp``) and written by
  its one renderer (``render_instant``); **budgets** by the engine's own budget reading
  (``budget_from_wire`` / ``budget_to_wire``: exact micro-units, "not set" kept apart from 0);
  **capability versions** by the core's ``capability_reference_version``; enums are the
  wire's strings.
- A member the projection carries in a lossy form (a Definition of Done criterion is an object
  on the wire, a description in the projection) is *kept* from the source document when the
  projection still reads the same, and otherwise refused: ``protocol_document()`` raises
  :class:`~missionweaveprotocol.documents.DocumentMappingError` naming the member, never
  inventing a value (reference gap §7.22).
- A projection field the normative document does not carry (``Mission.title``,
  ``permissions``, lease expiries, …) reads as its default (``None``, ``()``; ``title`` reads
  as the objective) and is not written.
- ``protocol_document()`` starts from the document the projection was read from (members the
  projection has no field for — ``approvalPolicy``, ``membershipId``, ``scopes`` … — come
  from there), writes the projection's fields over it and validates the result against the
  pinned schema in the core; a projection built by hand has no source document, so the schema
  names the first member it lacks.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from enum import Enum
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Tuple, Type, TypeVar

from pydantic import BaseModel

from . import _native
from .errors import InvalidInputError, SchemaValidationError

_MISSING: Any = object()
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)

Document = Dict[str, Any]
T = TypeVar("T", bound=BaseModel)


# -- values (each conversion once) --------------------------------------------------------


def instant(text: Any) -> datetime:
    """A wire timestamp as an aware UTC datetime, by the core's RFC 3339 parser (microsecond
    precision: finer digits are floored)."""
    protected = _native.parse_timestamp(text)
    moment = protected.instant
    micros = int((moment.fraction + "000000")[:6])
    return _EPOCH + timedelta(seconds=moment.epoch_second, microseconds=micros)


def timestamp(value: datetime) -> str:
    """An aware datetime as a wire timestamp, by the core's renderer (``Z``, shortest
    fraction)."""
    return _native.render_instant(value, fraction="shortest")


def plain(value: Any) -> Any:
    """A projection value as JSON: enums by value, models by alias, tuples as lists."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, datetime):
        return timestamp(value)
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    if isinstance(value, (tuple, list)):
        return [plain(v) for v in value]
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    return value


def budget_limits(budget: Any) -> Any:
    """The ``ResourceBudget`` of a wire budget (``None`` = not set), as the engine reads it."""
    from ._projections import ResourceBudget

    _currency, limits = _native.budget_from_wire(budget)
    return ResourceBudget(**dict(zip(_DIMENSIONS, limits)))


def budget_document(value: Any, source: Any) -> Document:
    """A ``ResourceBudget`` as a wire budget; the currency (which the compact budget does not
    carry) is the source document's."""
    currency = source.get("currency") if isinstance(source, Mapping) else None
    limits = [getattr(value, name) for name in _DIMENSIONS]
    return _native.budget_to_wire(currency, limits)


_DIMENSIONS = (
    "financial_microunits",
    "model_tokens",
    "tool_calls",
    "compute_seconds",
    "wall_clock_seconds",
    "external_actions",
)


# -- the row engine -----------------------------------------------------------------------

Reader = Callable[[Any], Any]
Writer = Callable[[Any, Any], Any]


def _same(value: Any) -> Any:
    return value


def _write_plain(value: Any, _source: Any) -> Any:
    return plain(value)


@dataclass(frozen=True)
class Row:
    """Projection ``field`` ↔ document member at ``path``. ``write`` is ``None`` for a lossy
    reading: the source member is kept while the projection reads the same."""

    field: str
    path: Tuple[str, ...]
    read: Reader = _same
    write: Optional[Writer] = _write_plain
    #: ``write`` also maps ``None`` (otherwise ``None`` removes the member).
    writes_none: bool = False


def _get(document: Any, path: Tuple[str, ...]) -> Any:
    node = document
    for name in path:
        if not isinstance(node, Mapping) or name not in node:
            return _MISSING
        node = node[name]
    return node


def _set(document: Document, path: Tuple[str, ...], value: Any) -> None:
    node = document
    for name in path[:-1]:
        child = node.get(name)
        if not isinstance(child, dict):
            child = {}
            node[name] = child
        node = child
    if value is None:
        node.pop(path[-1], None)
    else:
        node[path[-1]] = value


def _pointer(path: Tuple[str, ...]) -> str:
    return "/" + "/".join(path)


def read(model: Type[T], rows: Iterable[Row], document: Any, defaults: Mapping[str, Any]) -> T:
    """The projection of ``document`` (a normative document as a mapping)."""
    from .documents import DocumentMappingError
    from .models import QueryResult

    if isinstance(document, QueryResult):
        document = document.value
    if model.__name__ in ("Message", "MessageAmendment"):
        document = message_document(document)
    elif model.__name__ == "DelegationGrant":
        document = grant_document(document)
    if not isinstance(document, Mapping):
        raise DocumentMappingError(
            f"{model.__name__}.from_document: a document is a JSON object, not "
            f"{type(document).__name__}",
            reason="not-an-object",
        )
    values: Dict[str, Any] = {}
    for row in rows:
        raw = _get(document, row.path)
        if raw is _MISSING:
            continue
        try:
            values[row.field] = row.read(raw)
        except (InvalidInputError, ValueError, TypeError, KeyError) as error:
            raise DocumentMappingError(
                f"{model.__name__}.from_document: member {_pointer(row.path)}: {error}",
                reason="schema-invalid",
                member=_pointer(row.path),
            ) from error
    for name, value in defaults.items():
        if name not in values:
            values[name] = value(values) if callable(value) else value
    projection = model.model_validate(values)
    projection._document = copy.deepcopy(dict(document))  # type: ignore[attr-defined]
    return projection


def write(
    projection: BaseModel,
    rows: Iterable[Row],
    schema: str,
    *,
    signed: bool = False,
    validate: bool = True,
) -> Document:
    """The normative document of ``projection`` (see the module docstring). A ``signed``
    kind (an Artifact manifest) is returned only unchanged: a changed member would void its
    signature, and signing is the codec's (``ProtocolDocumentAdapter``), never a side effect."""
    from .documents import DocumentMappingError, _schema_failure

    source: Optional[Document] = getattr(projection, "_document", None)
    document: Document = copy.deepcopy(source) if source is not None else {}
    name = type(projection).__name__
    for row in rows:
        value = getattr(projection, row.field)
        raw = _get(document, row.path)
        if raw is not _MISSING:
            try:
                if row.read(raw) == value:
                    continue  # unchanged: keep the member byte for byte
            except (InvalidInputError, ValueError, TypeError, KeyError):
                pass
        if raw is _MISSING and value in (None, (), {}) and not row.writes_none:
            continue
        if signed:
            raise DocumentMappingError(
                f"{name}.protocol_document: {row.field} differs from the signed "
                f"{schema} member {_pointer(row.path)}; a changed signed document must be "
                "signed again (ProtocolDocumentAdapter)",
                code="AUTH_INVALID_SIGNATURE",
                reason="signed-document-changed",
                member=_pointer(row.path),
            )
        if row.write is None:
            raise DocumentMappingError(
                f"{name}.protocol_document: {row.field} = {value!r} has no exact form in "
                f"{schema}.schema.json member {_pointer(row.path)}; edit the document instead",
                reason="not-representable",
                member=_pointer(row.path),
            )
        try:
            written = row.write(value, raw) if value is not None or row.writes_none else None
            _set(document, row.path, written)
        except InvalidInputError as error:
            raise DocumentMappingError(
                f"{name}.protocol_document: member {_pointer(row.path)}: {error}",
                reason="schema-invalid",
                member=_pointer(row.path),
            ) from error
    if validate:
        try:
            _native.SchemaCatalog().validate(schema, document)
        except SchemaValidationError as error:
            raise _schema_failure(error, f"{name}.protocol_document ({schema})") from error
    return document


# -- the tables ---------------------------------------------------------------------------


def _principal(raw: Any) -> Any:
    from .models import Principal

    return Principal(type=raw["type"], id=raw["id"])


def _descriptions(raw: Any) -> Tuple[str, ...]:
    return tuple(item["description"] for item in raw)


def _capabilities(raw: Any) -> Tuple[Any, ...]:
    from ._projections import CapabilityRequirement

    return tuple(CapabilityRequirement(id=c["id"], minimum_version=c["version"]) for c in raw)


def _group_state(value: Any, _source: Any) -> str:
    return "archived" if value is not None else "active"


def _single_role(value: Any, _source: Any) -> Any:
    from .documents import DocumentMappingError

    if len(value) != 1:
        raise DocumentMappingError(
            f"a normative Membership has one role; this projection has {len(value)}",
            reason="not-representable",
            member="/role",
        )
    return plain(value[0])


def _retry(raw: Any) -> Any:
    from ._projections import RetryPolicy

    delay = _native.parse_duration_ms(raw.get("maxDelay", ""))
    # A model (not a dict): the kept-when-unchanged check compares it with the projection's.
    return RetryPolicy(
        max_attempts=raw["maxAttempts"],
        maximum_backoff_seconds=0 if delay is None else delay // 1000,
    )


MISSION_ROWS = (
    Row("id", ("missionId",)),
    Row("group_id", ("groupId",)),
    Row("objective", ("objective",)),
    Row("definition_of_done", ("definitionOfDone",), _descriptions, None),
    Row("owner", ("missionOwner",), _principal),
    Row("coordinator_id", ("coordinator", "agentId")),
    Row("coordinator_epoch", ("coordinator", "coordinatorEpoch")),
    Row("budget", ("budget",), budget_limits, budget_document),
    Row("deadline", ("deadline",), instant),
    Row("status", ("state",)),
    Row("revision", ("revision",)),
    Row("parent_mission_id", ("parent", "missionId"), _same, None),
    Row("parent_work_item_id", ("parent", "workItemId"), _same, None),
    Row("follow_up_of_mission_id", ("followUpToMissionId",)),
    Row("created_at", ("createdAt",), instant),
)
MISSION_DEFAULTS: Dict[str, Any] = {
    # The normative Mission has no title: the objective stands for it.
    "title": lambda values: values.get("objective"),
}

GROUP_ROWS = (
    Row("id", ("groupId",)),
    Row("mission_id", ("missionId",)),
    Row("main_conversation_id", ("mainConversationId",)),
    Row("created_at", ("createdAt",), instant),
    Row("archived_at", ("archivedAt",), instant),
    Row("archive_snapshot_id", ("archiveSnapshotId",)),
)
# Written only: ``state`` follows ``archived_at`` (group.schema.json: active | archived).
GROUP_WRITE_ROWS = GROUP_ROWS + (Row("archived_at", ("state",), _same, _group_state, True),)

MEMBERSHIP_ROWS = (
    Row("group_id", ("groupId",)),
    Row("principal", ("member",), _principal),
    Row("roles", ("role",), lambda raw: (raw,), _single_role),
    Row("status", ("state",)),
    Row("epoch", ("membershipEpoch",)),
    Row("visibility_after_sequence", ("visibilityStartSequence",)),
    Row("joined_at", ("grantedAt",), instant),
    Row("ended_at", ("endedAt",), instant),
)

CONTRACT_ROWS = (
    Row("goal", ("goal",)),
    Row("deliverables", ("requiredDeliverables",), _descriptions, None),
    Row("acceptance_criteria", ("acceptanceCriteria",), _descriptions, None),
    Row("inputs", ("inputArtifacts",), tuple),
    Row("deadline", ("deadline",), instant),
    Row("required_capabilities", ("requiredCapabilities",), _capabilities, None),
    Row("budget", ("budget",), budget_limits, budget_document),
    Row("retry_policy", ("retryPolicy",), _retry, None),
    Row("side_effect_risk", ("sideEffectRisk",)),
    Row("execution_approval", ("executionApproval",)),
)


def _contract(raw: Any) -> Any:
    from ._projections import WorkContract

    return read(WorkContract, CONTRACT_ROWS, raw, {})


def _contract_document(value: Any, source: Any) -> Any:
    if isinstance(source, Mapping) and getattr(value, "_document", None) is None:
        value._document = copy.deepcopy(dict(source))
    return write(value, CONTRACT_ROWS, "work-contract")


def _pending(raw: Any) -> Tuple[str, ...]:
    return tuple(o["agentId"] for o in raw if o.get("status") == "pending")


def _pending_expiry(raw: Any) -> Optional[datetime]:
    times = [instant(o["expiresAt"]) for o in raw if o.get("status") == "pending"]
    return min(times) if times else None


def _pins(raw: Any) -> Dict[str, int]:
    return {pin["id"]: int(str(pin["version"]).split(".")[0]) for pin in raw}


WORK_ITEM_ROWS = (
    Row("id", ("workItemId",)),
    Row("mission_id", ("missionId",)),
    Row("group_id", ("groupId",)),
    Row("conversation_id", ("conversationId",)),
    Row("created_by", ("createdBy",), _principal),
    Row("contract", ("contract",), _contract, _contract_document),
    Row("status", ("state",)),
    Row("revision", ("revision",)),
    Row("dependency_ids", ("contract", "dependencyWorkItemIds"), tuple),
    Row("offered_agent_ids", ("offers",), _pending, None),
    Row("offer_expires_at", ("offers",), _pending_expiry, None),
    Row("assignee_id", ("owner", "agentId"), _same, None),
    Row("assigned_agent_card_version", ("owner", "agentCardVersion"), _same, None),
    Row("assigned_capability_versions", ("owner", "capabilityPins"), _pins, None),
    Row("ownership_epoch", ("owner", "ownershipEpoch"), _same, None),
    Row("created_at", ("createdAt",), instant),
    Row("updated_at", ("updatedAt",), instant),
)
def _text(raw: Any) -> str:
    """A Message's ``content`` parts as the compact text: its text parts, joined."""
    return "".join(part["text"] for part in raw if part.get("type") == "text")


def _text_parts(value: Any, _source: Any) -> List[Dict[str, str]]:
    return [{"type": "text", "text": value}]


def _mention_ids(raw: Any) -> Tuple[str, ...]:
    return tuple(actor["id"] for actor in raw)


MESSAGE_ROWS = (
    Row("id", ("messageId",)),
    Row("group_id", ("groupId",)),
    Row("conversation_id", ("conversationId",)),
    Row("author", ("author",), _principal),
    Row("content", ("content",), _text, _text_parts),
    Row("mentions", ("mentions",), _mention_ids, None),
    Row("created_at", ("committedAt",), instant),
)

AMENDMENT_ROWS = (
    Row("id", ("messageId",)),
    Row("group_id", ("groupId",)),
    Row("message_id", ("targetMessageId",)),
    Row("kind", ("kind",)),
    Row("actor", ("author",), _principal),
    Row("replacement_content", ("content",), _text, _text_parts),
    Row("reason", ("reason",)),
    Row("created_at", ("committedAt",), instant),
)


def message_document(document: Any) -> Any:
    """A Core ``message`` answer is ``{message, state, lastAmendmentId?}``: its ``message``."""
    if isinstance(document, Mapping) and isinstance(document.get("message"), Mapping):
        return document["message"]
    return document


def _delegation_budget(raw: Any) -> Dict[str, Any]:
    currency, limits = _native.budget_from_wire(raw)
    return {"currency": currency, **dict(zip(_DIMENSIONS, limits))}


def _delegation_budget_document(value: Any, _source: Any) -> Document:
    return _native.budget_to_wire(value.currency, [getattr(value, n) for n in _DIMENSIONS])


def _capability_refs(value: Any, _source: Any) -> List[Dict[str, str]]:
    return [{"id": c.id, "version": c.semver} for c in value]


def _agent(raw: Any) -> Any:
    return raw  # the model reads a Principal-like value (and refuses a non-Agent grantor)


def _agent_document(value: Any, _source: Any) -> Dict[str, str]:
    return {"type": "agent", "id": value}


DELEGATION_GRANT_ROWS = (
    Row("id", ("grantId",)),
    Row("grantee_agent_id", ("granteeAgentId",)),
    Row("mission_id", ("missionId",)),
    Row("group_id", ("groupId",)),
    Row("target_work_item_id", ("targetWorkItemId",)),
    Row("allowed_capabilities", ("allowedCapabilities",), _capabilities, _capability_refs),
    Row("budget", ("budget",), _delegation_budget, _delegation_budget_document),
    Row("max_descendant_depth", ("maxDescendantDepth",)),
    Row("grantee_membership_epoch", ("granteeMembershipEpoch",)),
    Row("coordinator_epoch", ("coordinatorEpoch",)),
    Row("granted_by", ("grantedBy",), _agent, _agent_document),
    Row("granted_at", ("grantedAt",), instant),
    Row("expires_at", ("expiresAt",), instant),
)


def grant_document(document: Any) -> Any:
    """A Core ``delegation_grant`` answer is ``{grant, uses}``: its ``grant``."""
    if isinstance(document, Mapping) and isinstance(document.get("grant"), Mapping):
        return document["grant"]
    return document


def _tool_versions(raw: Any) -> Dict[str, str]:
    return {item["name"]: item["version"] for item in raw}


def _tool_list(value: Any, _source: Any) -> List[Dict[str, str]]:
    return [{"name": name, "version": version} for name, version in value.items()]


ARTIFACT_ROWS = (
    Row("id", ("artifactId",)),
    Row("content_hash", ("contentHash",)),
    Row("media_type", ("mediaType",)),
    Row("schema_uri", ("schemaUri",)),
    Row("producing_agent_id", ("producer", "agentId")),
    Row("agent_card_version", ("producer", "agentCardVersion")),
    Row("mission_id", ("missionId",)),
    Row("group_id", ("groupId",)),
    Row("work_item_id", ("workItemId",)),
    Row("source_artifact_hashes", ("sourceArtifactHashes",), tuple),
    Row("tool_versions", ("toolVersions",), _tool_versions, _tool_list),
    Row("model_versions", ("modelVersions",), _tool_versions, _tool_list),
    Row("created_at", ("createdAt",), instant),
    Row("data_classification", ("classification",)),
    Row("signature", ("signature", "value"), _same, None),
)

def _signature_value(raw: Any) -> Any:
    return raw


def _envelope(raw: Any) -> Any:
    from .models import SignatureEnvelope

    return SignatureEnvelope(
        algorithm=raw["algorithm"], key_id=raw["keyId"], created_at=instant(raw["createdAt"]),
        value=raw["value"],
    )


def _first_key(raw: Any) -> str:
    return str(raw[0]["publicKey"])


def _card_capabilities(raw: Any) -> Tuple[Any, ...]:
    from ._projections import Capability

    return tuple(
        Capability(
            id=c["id"],
            version=int(str(c["version"]).split(".")[0]),
            input_schema=c.get("inputSchema"),
            output_schema=c.get("outputSchema"),
            constraints=c.get("constraints", {}),
            verified_evidence=tuple(c.get("verifiedEvidence", ())),
        )
        for c in raw
    )


def _actor_id(raw: Any) -> str:
    return str(raw["id"])


def _strings(raw: Any) -> Tuple[str, ...]:
    return tuple(raw)


def _dependencies(raw: Any) -> Tuple[str, ...]:
    return tuple(raw)


WORK_PROPOSAL_ROWS = (
    Row("id", ("proposalId",)),
    Row("mission_id", ("missionId",)),
    Row("group_id", ("groupId",)),
    Row("proposed_by", ("proposedBy",), _principal),
    Row("contract", ("contract",), _contract, _contract_document),
    Row("dependency_ids", ("contract", "dependencyWorkItemIds"), _dependencies),
    Row("status", ("status",)),
    Row("authorized_work_item_id", ("authorizedWorkItemId",)),
    Row("created_at", ("createdAt",), instant),
    Row("updated_at", ("updatedAt",), instant),
)

CONVERSATION_ROWS = (
    Row("id", ("conversationId",)),
    Row("group_id", ("groupId",)),
    Row("work_item_id", ("primaryWorkItemId",)),
    Row("title", ("title",)),
    Row("created_at", ("createdAt",), instant),
)

AGENT_CARD_ROWS = (
    Row("agent_id", ("agentId",)),
    Row("version", ("cardVersion",)),
    Row("display_name", ("displayName",)),
    Row("owner", ("owner",), _actor_id, None),
    Row("public_key", ("publicKeys",), _first_key, None),
    Row("capabilities", ("capabilities",), _card_capabilities, None),
    Row("issued_at", ("issuedAt",), instant),
    Row("signature", ("signature", "value"), _signature_value, None),
)

APPROVAL_ROWS = (
    Row("id", ("approvalId",)),
    Row("mission_id", ("missionId",)),
    Row("mission_revision", ("missionRevision",)),
    Row("artifact_hashes", ("artifactHashes",), _strings),
    Row("acceptance_policy_version", ("acceptancePolicyVersion",)),
    Row("approver", ("approver",), _principal),
    Row("approved_at", ("occurredAt",), instant),
    Row("comments", ("comments",)),
    Row("signature", ("signature", "value"), _signature_value, None),
)

EXECUTION_APPROVAL_ROWS = (
    Row("id", ("approvalId",)),
    Row("mission_id", ("missionId",)),
    Row("group_id", ("groupId",)),
    Row("work_item_id", ("workItemId",)),
    Row("ownership_epoch", ("ownershipEpoch",)),
    Row("operations", ("operations",), _strings),
    Row("resources", ("resources",), _strings),
    Row("budget", ("budget",), budget_limits, budget_document),
    Row("approver", ("approver",), _principal),
    # The stored record also keeps the instants in milliseconds (``approvedAtMs``,
    # ``expiresAtMs``): not representable from here, so a changed instant is refused.
    Row("approved_at", ("approvedAt",), instant, None),
    Row("expires_at", ("expiresAt",), instant, None),
    Row("comments", ("comments",)),
)

COOPERATION_OVERRIDE_ROWS = (
    Row("id", ("grant", "grantId")),
    Row("mission_id", ("grant", "missionId")),
    Row("group_id", ("grant", "groupId")),
    Row("policy_name", ("grant", "policyName")),
    Row("beneficiary", ("grant", "beneficiary"), _principal),
    Row("target_command_kind", ("grant", "targetCommandKind")),
    Row("target_action_id", ("grant", "targetActionId")),
    Row("approver", ("grant", "approver"), _principal),
    Row("reason", ("grant", "reason")),
    Row("granted_at", ("grant", "grantedAt"), instant),
    Row("expires_at", ("grant", "expiresAt"), instant),
    Row("consumed_at", ("consumed", "consumedAt"), instant, None),
)

GROUP_SNAPSHOT_ROWS = (
    Row("snapshot_id", ("snapshotId",)),
    Row("group_id", ("groupId",)),
    Row("through_sequence", ("throughSequence",)),
    Row("event_ids", ("eventIds",), _strings),
    Row("state_hash", ("stateHash",)),
    Row("policy_log", ("policyLog",), tuple),
    Row("created_by", ("createdBy",), _principal),
    Row("created_at", ("createdAt",), instant),
    Row("signature", ("signature",), _envelope, None),
)

#: A signature the stored record does not carry (the grant or approval is the Event of a
#: signed Command, §6.4): the projection's required ``signature`` reads as ``""``.
UNSIGNED_DEFAULTS: Dict[str, Any] = {"signature": ""}

WORK_ITEM_DEFAULTS: Dict[str, Any] = {
    # A WorkItem never updated carries only ``createdAt``.
    "updated_at": lambda values: values.get("created_at"),
}

__all__: List[str] = []
