"""Issue 25, "Missing names (import time)": every name the reference runtime's users import
exists with the reference's class kind, and each model has the reference's documented fields
(``reference-python.md`` §1.1, §1.4, §1.14, §1.22, §1.24, §1.25), in declaration order. The
expected field lists are written here from that inventory, not read from the package."""

from __future__ import annotations

import asyncio
import importlib
import json
from enum import Enum
from typing import Any, Dict, List, Tuple

import pytest
from pydantic import BaseModel

from missionweaveprotocol import _native

# -- names and class kinds ----------------------------------------------------------------

MODEL = "pydantic"
ENUM = "enum"
PROTOCOL = "protocol"
FUNCTION = "function"
EXCEPTION = "exception"
CLASS = "class"

PAYLOADS = [
    "CreateMissionPayload", "CreateChildMissionPayload", "AddMembershipPayload",
    "EndMembershipPayload", "GrantDelegationPayload", "ReplaceCoordinatorPayload",
    "RenewCoordinatorLeasePayload", "PostMessagePayload", "CorrectMessagePayload",
    "RetractMessagePayload", "RedactMessagePayload", "ProposeWorkItemPayload",
    "CreateWorkItemPayload", "AddWorkItemDependencyPayload", "OfferWorkItemPayload",
    "AcceptWorkOfferPayload", "StartWorkItemPayload", "RenewExecutionLeasePayload",
    "RecordResourceUsagePayload", "CheckpointWorkItemPayload", "BlockWorkItemPayload",
    "UnblockWorkItemPayload", "PublishArtifactPayload", "SubmitWorkItemPayload",
    "VerifyWorkItemPayload", "FailWorkItemPayload", "CancelWorkItemPayload",
    "SubmitMissionPayload", "ApproveMissionPayload", "GrantExecutionApprovalPayload",
    "GrantCooperationOverridePayload", "RequestMissionChangesPayload", "FailMissionPayload",
    "CancelMissionPayload", "ArchiveGroupPayload", "OpenAgentSessionPayload",
    "RegisterAgentCardPayload",
]

NAMES: Dict[str, Dict[str, str]] = {
    "models": {
        **{name: MODEL for name in (
            "Mission", "Group", "Membership", "WorkItem", "WorkContract", "ResourceBudget",
            "ResourceUsage", "SelectionBasis", "Capability", "CapabilityRequirement",
            "AgentCard", "Artifact", "Evidence", "Checkpoint", "Approval", "ExecutionApproval",
            "Message", "MessageAmendment", "Conversation", "WorkProposal", "GroupSnapshot",
            "DelegationGrant", "DelegationBudget", "CooperationOverrideGrant", "RetryPolicy",
            "PolicyLogEntry", "PresenceRecord", *PAYLOADS)},
        "WorkProposalStatus": ENUM,
        "CooperationPolicyName": ENUM,
        "ChildFailurePolicy": ENUM,
        "ActorType": ENUM,
    },
    "crypto": {"sign_canonical": FUNCTION, "verify_canonical": FUNCTION,
               "sign_bytes": FUNCTION, "verify_bytes": FUNCTION},
    "store": {"AuthoritativeStore": PROTOCOL},
    "context": {"PolicyLogEntry": MODEL, "GroupSnapshot": MODEL},
    "wire": {
        **{name: MODEL for name in (
            "HelloFrame", "ChallengeFrame", "AuthFrame", "WelcomeFrame", "SubscribeFrame",
            "CommandFrame", "EventFrame", "AckFrame", "PingFrame", "ErrorFrame",
            "ErrorDocument", "GroupCursor", "AttentionFilter", "Acknowledgement")},
        "parse_frame": FUNCTION, "parse_received_frame": FUNCTION, "encode_frame": FUNCTION,
    },
    # §1.29: the console entry points (``*_app`` are the entry functions, not Typer apps).
    "cli": {
        "POCReport": PROTOCOL,
        **{name: FUNCTION for name in (
            "tls13_context_factory", "load_agent_cards", "create_gateway_app", "server", "demo",
            "conformance", "server_app", "demo_app", "conformance_app")},
    },
    # §1.26: the FastAPI gateway.
    "gateway": {
        "GroupGateway": CLASS, "CoreGatewayAdapter": CLASS, "InMemoryCursorStore": CLASS,
        "GatewayCore": PROTOCOL, "CursorStore": PROTOCOL,
        **{name: EXCEPTION for name in (
            "GatewaySchemaError", "SubscriptionDenied", "UnknownCriticalExtension",
            "CommandAdmissionError")},
    },
    "registry": {
        "AgentCard": MODEL, "CapabilityDescriptor": MODEL, "CapabilityPerformance": MODEL,
        "PresenceRecord": MODEL, "AgentRegistry": CLASS, "RegistryError": EXCEPTION,
    },
}


def kind_of(value: Any) -> str:
    if isinstance(value, type):
        if issubclass(value, BaseModel):
            return MODEL
        if issubclass(value, Enum):
            return ENUM
        if issubclass(value, BaseException):
            return EXCEPTION
        if getattr(value, "_is_protocol", False):
            return PROTOCOL
        return CLASS
    return FUNCTION if callable(value) else type(value).__name__


@pytest.mark.parametrize("module", sorted(NAMES))
def test_every_name_imports_with_the_reference_class_kind(module: str) -> None:
    imported = importlib.import_module(f"missionweaveprotocol.{module}")
    for name, kind in NAMES[module].items():
        assert hasattr(imported, name), f"{module}.{name} is missing"
        assert kind_of(getattr(imported, name)) == kind, f"{module}.{name}"
        assert name in imported.__all__, f"{module}.{name} not in __all__"


def test_a_name_the_reference_does_not_have_is_absent() -> None:
    import missionweaveprotocol.models as models
    import missionweaveprotocol.registry as registry

    assert not hasattr(models, "CreateMissionPayloadV2")
    with pytest.raises(AttributeError):
        registry.Candidate  # noqa: B018 — not offered (its ranking formula is undocumented)


def test_actor_type_system_is_the_wire_service() -> None:
    from missionweaveprotocol.models import ActorType, Principal

    assert ActorType.SYSTEM is ActorType.SERVICE and ActorType("system") is ActorType.SERVICE
    assert Principal(type="system", id="urn:x:org").model_dump(mode="json")["type"] == "service"
    with pytest.raises(ValueError):
        ActorType("robot")


def test_enum_values_are_the_cores_vocabulary() -> None:
    from missionweaveprotocol.models import ChildFailurePolicy, CooperationPolicyName, WorkProposalStatus

    vocabularies = _native.vocabularies()
    assert tuple(CooperationPolicyName) == tuple(vocabularies["cooperation_policy_name"])
    assert [p.value for p in ChildFailurePolicy] == [
        "block_parent_work_item", "fail_parent_work_item", "fail_parent_mission"]
    assert [s.value for s in WorkProposalStatus] == ["open", "authorized", "withdrawn"]


# -- the reference's documented fields, in declaration order ------------------------------

DIMENSIONS = ["financial_microunits", "model_tokens", "tool_calls", "compute_seconds",
              "wall_clock_seconds", "external_actions"]

FIELDS: Dict[Tuple[str, str], List[str]] = {
    ("models", "PolicyLogEntry"): ["entry_id", "decision", "actor", "details", "occurred_at"],
    ("models", "GroupSnapshot"): ["snapshot_id", "group_id", "through_sequence", "event_ids",
                                  "state_hash", "policy_log", "created_by", "created_at",
                                  "signature"],
    ("models", "Capability"): ["id", "version", "input_schema", "output_schema", "constraints",
                               "verified_evidence"],
    ("models", "CapabilityRequirement"): ["id", "minimum_version"],
    ("models", "AgentCard"): ["agent_id", "version", "display_name", "owner", "public_key",
                              "capabilities", "issued_at", "signature"],
    ("models", "PresenceRecord"): ["agent_id", "online", "available_capacity",
                                   "available_capabilities", "estimated_response_seconds",
                                   "last_heartbeat_at"],
    ("models", "ResourceBudget"): DIMENSIONS,
    ("models", "ResourceUsage"): DIMENSIONS,
    ("models", "DelegationBudget"): DIMENSIONS + ["currency"],
    ("models", "RetryPolicy"): ["max_attempts", "initial_backoff_seconds",
                                "maximum_backoff_seconds"],
    ("models", "WorkContract"): ["goal", "deliverables", "acceptance_criteria", "inputs",
                                 "allowed_tools", "allowed_resources", "deadline",
                                 "requested_priority", "estimated_duration_seconds",
                                 "required_capabilities", "budget", "retry_policy", "exclusive",
                                 "side_effect_risk", "execution_approval"],
    ("models", "SelectionBasis"): ["required_capabilities", "verified_capability_matches",
                                   "authorization_eligible", "availability_estimate",
                                   "expected_cost_microunits", "reliability_evidence",
                                   "policy_rules_applied"],
    ("models", "Evidence"): ["kind", "description", "success", "artifact_hash", "data"],
    ("models", "Checkpoint"): ["phase", "completed_milestones", "next_step",
                               "state_artifact_hash", "created_at"],
    ("models", "Mission"): ["id", "group_id", "title", "objective", "definition_of_done", "owner",
                            "coordinator_id", "coordinator_epoch", "coordinator_lease_expires_at",
                            "budget", "deadline", "permissions", "status", "revision",
                            "parent_mission_id", "parent_work_item_id", "follow_up_of_mission_id",
                            "child_failure_policy", "submitted_revision",
                            "submitted_artifact_hashes", "approved_artifact_hashes",
                            "failure_reason", "created_at", "updated_at"],
    ("models", "Group"): ["id", "mission_id", "main_conversation_id", "created_at", "archived_at",
                          "archive_snapshot_id"],
    ("models", "Membership"): ["group_id", "principal", "roles", "status", "epoch",
                               "visibility_after_sequence", "joined_at", "ended_at"],
    ("models", "DelegationGrant"): ["id", "grantee_agent_id", "mission_id", "group_id",
                                    "target_work_item_id", "allowed_capabilities", "budget",
                                    "max_descendant_depth", "grantee_membership_epoch",
                                    "coordinator_epoch", "granted_by", "granted_at",
                                    "expires_at"],
    ("models", "CooperationOverrideGrant"): ["id", "mission_id", "group_id", "policy_name",
                                             "beneficiary", "target_command_kind",
                                             "target_action_id", "approver", "reason",
                                             "granted_at", "expires_at", "signature",
                                             "consumed_at", "consumed_event_id"],
    ("models", "Conversation"): ["id", "group_id", "work_item_id", "title", "created_at"],
    ("models", "Message"): ["id", "group_id", "conversation_id", "author", "content", "mentions",
                            "created_at"],
    ("models", "MessageAmendment"): ["id", "group_id", "message_id", "kind", "actor",
                                     "replacement_content", "reason", "created_at"],
    ("models", "WorkProposal"): ["id", "mission_id", "group_id", "proposed_by", "contract",
                                 "dependency_ids", "parent_work_item_id", "status",
                                 "authorized_work_item_id", "created_at", "updated_at"],
    ("models", "WorkItem"): ["id", "mission_id", "group_id", "conversation_id", "created_by",
                             "contract", "status", "revision", "dependency_ids",
                             "offered_agent_ids", "offer_expires_at", "assignee_id",
                             "assigned_agent_card_version", "assigned_capability_versions",
                             "selection_basis", "ownership_epoch", "ownership_lease_expires_at",
                             "execution_lease_id", "execution_lease_expires_at", "checkpoints",
                             "blocker", "artifact_ids", "submission_evidence",
                             "verification_evidence", "child_mission_id", "parent_work_item_id",
                             "delegation_grant_id", "delegation_depth", "failure_reason",
                             "created_at", "updated_at"],
    ("models", "Artifact"): ["id", "content_hash", "media_type", "schema_uri",
                             "producing_agent_id", "agent_card_version", "mission_id", "group_id",
                             "work_item_id", "source_artifact_hashes", "tool_versions",
                             "model_versions", "created_at", "data_classification", "signature"],
    ("models", "Approval"): ["id", "mission_id", "mission_revision", "artifact_hashes",
                             "acceptance_policy_version", "approver", "approved_at", "comments",
                             "signature"],
    ("models", "ExecutionApproval"): ["id", "mission_id", "group_id", "work_item_id",
                                      "ownership_epoch", "operations", "resources", "budget",
                                      "approver", "approved_at", "expires_at", "comments",
                                      "signature"],
    # payloads
    ("models", "CreateMissionPayload"): ["mission_id", "group_id", "coordinator_id", "title",
                                         "objective", "definition_of_done", "budget", "deadline",
                                         "permissions", "coordinator_lease_seconds",
                                         "follow_up_of_mission_id"],
    ("models", "AddMembershipPayload"): ["principal", "roles", "provisional",
                                         "visibility_after_sequence"],
    ("models", "EndMembershipPayload"): ["principal"],
    ("models", "ReplaceCoordinatorPayload"): ["coordinator_id", "lease_seconds"],
    ("models", "RenewCoordinatorLeasePayload"): ["lease_seconds"],
    ("models", "PostMessagePayload"): ["message_id", "conversation_id", "content", "mentions"],
    ("models", "CorrectMessagePayload"): ["amendment_id", "message_id", "replacement_content",
                                          "reason"],
    ("models", "RetractMessagePayload"): ["amendment_id", "message_id", "reason"],
    ("models", "ProposeWorkItemPayload"): ["proposal_id", "contract", "dependency_ids",
                                           "parent_work_item_id"],
    ("models", "CreateWorkItemPayload"): ["work_item_id", "contract", "dependency_ids",
                                          "proposal_id", "parent_work_item_id",
                                          "delegation_grant_id"],
    ("models", "AddWorkItemDependencyPayload"): ["work_item_id", "dependency_id"],
    ("models", "OfferWorkItemPayload"): ["work_item_id", "candidate_agent_ids", "selection_basis",
                                         "offer_expires_in_seconds", "delegation_grant_id"],
    ("models", "AcceptWorkOfferPayload"): ["work_item_id", "ownership_lease_seconds"],
    ("models", "StartWorkItemPayload"): ["work_item_id", "ownership_epoch",
                                         "execution_lease_seconds"],
    ("models", "RenewExecutionLeasePayload"): ["work_item_id", "ownership_epoch",
                                               "execution_lease_id", "lease_seconds"],
    ("models", "RecordResourceUsagePayload"): ["work_item_id", "ownership_epoch",
                                               "execution_lease_id", "usage_delta"],
    ("models", "CheckpointWorkItemPayload"): ["work_item_id", "ownership_epoch",
                                              "execution_lease_id", "checkpoint",
                                              "resume_within_seconds"],
    ("models", "BlockWorkItemPayload"): ["work_item_id", "ownership_epoch", "execution_lease_id",
                                         "reason", "checkpoint", "blocked_lease_seconds"],
    ("models", "UnblockWorkItemPayload"): ["work_item_id"],
    ("models", "PublishArtifactPayload"): ["artifact", "ownership_epoch", "execution_lease_id"],
    ("models", "SubmitWorkItemPayload"): ["work_item_id", "ownership_epoch", "execution_lease_id",
                                          "artifact_ids", "evidence"],
    ("models", "VerifyWorkItemPayload"): ["work_item_id", "evidence"],
    ("models", "FailWorkItemPayload"): ["work_item_id", "reason", "ownership_epoch",
                                        "execution_lease_id"],
    ("models", "CancelWorkItemPayload"): ["work_item_id", "reason"],
    ("models", "SubmitMissionPayload"): ["artifact_hashes"],
    ("models", "ApproveMissionPayload"): ["approval_id", "mission_revision", "artifact_hashes",
                                          "acceptance_policy_version", "comments"],
    ("models", "GrantExecutionApprovalPayload"): ["approval_id", "work_item_id",
                                                  "ownership_epoch", "operations", "resources",
                                                  "budget", "expires_in_seconds", "comments"],
    ("models", "GrantCooperationOverridePayload"): ["grant_id", "policy_name", "beneficiary",
                                                    "target_command_kind", "target_action_id",
                                                    "reason", "expires_at"],
    ("models", "GrantDelegationPayload"): ["grant_id", "grantee_agent_id", "target_work_item_id",
                                           "allowed_capabilities", "budget",
                                           "max_descendant_depth", "expires_at"],
    ("models", "RequestMissionChangesPayload"): ["mission_revision", "feedback"],
    ("models", "FailMissionPayload"): ["reason"],
    ("models", "CancelMissionPayload"): ["reason"],
    ("models", "ArchiveGroupPayload"): ["snapshot"],
    # registry (its older model set)
    ("registry", "AgentCard"): ["agent_id", "owner", "version", "public_key", "capabilities",
                                "issued_at", "signature"],
    ("registry", "CapabilityDescriptor"): ["name", "version", "input_schema", "output_schema",
                                           "constraints", "verified_evidence"],
    ("registry", "PresenceRecord"): ["agent_id", "status", "available_slots",
                                     "capability_availability", "estimated_response_seconds",
                                     "heartbeat_at"],
    ("registry", "CapabilityPerformance"): ["agent_id", "capability", "accepted", "completed",
                                            "failed", "reassigned", "human_changes_requested",
                                            "average_deadline_variance_seconds",
                                            "average_budget_variance"],
    # wire
    ("wire", "HelloFrame"): ["protocol_version", "frame_id", "frame_type", "phase", "agent_id",
                             "key_id", "client_nonce", "supported_versions"],
    ("wire", "ChallengeFrame"): ["protocol_version", "frame_id", "frame_type", "phase",
                                 "selected_version", "client_nonce", "server_nonce", "challenge"],
    ("wire", "AuthFrame"): ["protocol_version", "frame_id", "frame_type", "phase", "agent_id",
                            "key_id", "client_nonce", "server_nonce", "challenge_signature"],
    ("wire", "WelcomeFrame"): ["protocol_version", "frame_id", "frame_type", "phase",
                               "selected_version", "session_token", "session_epoch",
                               "expires_at"],
    ("wire", "SubscribeFrame"): ["protocol_version", "frame_id", "frame_type", "subscription_id",
                                 "groups"],
    ("wire", "CommandFrame"): ["protocol_version", "frame_id", "frame_type", "command"],
    ("wire", "EventFrame"): ["protocol_version", "frame_id", "frame_type", "event"],
    ("wire", "AckFrame"): ["protocol_version", "frame_id", "frame_type", "acknowledgements",
                           "sent_at"],
    ("wire", "PingFrame"): ["protocol_version", "frame_id", "frame_type", "nonce",
                            "reply_to_nonce", "sent_at", "presence"],
    ("wire", "ErrorFrame"): ["protocol_version", "frame_id", "frame_type", "error"],
    ("wire", "AttentionFilter"): ["event_kinds", "conversation_ids", "work_item_ids",
                                  "mentions_only", "announcements"],
    ("wire", "GroupCursor"): ["group_id", "after_sequence", "attention"],
    ("wire", "Acknowledgement"): ["group_id", "sequence"],
    ("wire", "ErrorDocument"): ["code", "message", "retryable", "occurred_at", "fatal",
                                "related_frame_id", "related_action_id", "group_id",
                                "expected_revision", "current_revision", "retry_after_ms",
                                "snapshot_artifact_hash", "details"],
}


@pytest.mark.parametrize("where", sorted(FIELDS), ids=lambda w: f"{w[0]}.{w[1]}")
def test_fields_are_the_reference_fields_in_order(where: Tuple[str, str]) -> None:
    module, name = where
    model = getattr(importlib.import_module(f"missionweaveprotocol.{module}"), name)
    assert list(model.model_fields) == FIELDS[where]


def test_every_payload_has_a_field_list_or_is_undocumented() -> None:
    # The inventory does not spell out these two (the wire's members are used instead).
    undocumented = {"OpenAgentSessionPayload", "RegisterAgentCardPayload",
                    "CreateChildMissionPayload", "RedactMessagePayload"}
    assert {n for n in PAYLOADS if ("models", n) not in FIELDS} == undocumented


def test_delegation_budget_is_a_resource_budget() -> None:
    from missionweaveprotocol import delegation, models

    assert issubclass(models.DelegationBudget, models.ResourceBudget)
    assert models.DelegationBudget is delegation.DelegationBudget
    assert models.CapabilityRequirement is delegation.CapabilityRequirement


def test_payload_per_command_kind() -> None:
    from missionweaveprotocol._compact_payloads import PAYLOAD_MODELS
    from missionweaveprotocol.models import CommandKind

    assert set(PAYLOAD_MODELS) == set(CommandKind)
    assert PAYLOAD_MODELS[CommandKind.CREATE_FOLLOW_UP_MISSION].__name__ == "CreateMissionPayload"


def test_compact_models_validate_like_the_reference() -> None:
    from pydantic import ValidationError

    from missionweaveprotocol import models

    budget = models.ResourceBudget(tool_calls=3)
    assert budget.contains(models.ResourceBudget(tool_calls=2))
    assert not budget.contains(models.ResourceBudget(tool_calls=4))
    assert not budget.contains(models.ResourceBudget(model_tokens=1))
    assert budget.contains(None)
    assert models.ResourceUsage(tool_calls=1).model_dump(by_alias=True)["toolCalls"] == 1
    with pytest.raises(ValidationError):
        models.ResourceUsage(tool_calls=-1)
    with pytest.raises(ValidationError):
        models.SubmitMissionPayload(artifact_hashes=())
    with pytest.raises(ValidationError):
        models.SubmitMissionPayload(artifact_hashes=("sha256:nothex",))
    with pytest.raises(ValidationError):
        models.PostMessagePayload(message_id="m", conversation_id="c", content="x", extra=1)
    payload = models.AddMembershipPayload(principal=models.Principal.agent("urn:a:1"),
                                          roles=("worker",))
    assert payload.model_dump(mode="json", by_alias=True) == {
        "principal": {"type": "agent", "id": "urn:a:1"}, "roles": ["worker"],
        "provisional": False, "visibilityAfterSequence": None}


def test_the_models_usage_is_accepted_where_usages_are() -> None:
    from missionweaveprotocol.budget import BudgetLedger
    from missionweaveprotocol.models import ResourceUsage

    ledger = BudgetLedger()
    ledger.register_mission("m", ResourceUsage(tool_calls=5))
    ledger.register_work_item("w", "m", ResourceUsage(tool_calls=5))
    used = ledger.consume("w", ResourceUsage(tool_calls=2))
    assert used.tool_calls == 2
    assert ledger.remaining(("work_item", "w")).tool_calls == 3


# -- crypto: Ed25519 over RFC 8785 bytes, strict ------------------------------------------


def test_sign_and_verify_canonical() -> None:
    from missionweaveprotocol import crypto
    from missionweaveprotocol.models import Principal

    private, public = crypto.generate_keypair()
    value = {"b": [1, 2], "a": Principal.human("urn:h:1")}
    signature = crypto.sign_canonical(value, private)
    assert crypto.verify_canonical(value, signature, public)
    # The same value in another member order signs the same bytes (RFC 8785).
    assert crypto.verify_canonical({"a": {"type": "human", "id": "urn:h:1"}, "b": [1, 2]},
                                   signature, public)
    assert crypto.sign_canonical(value, private) == signature  # deterministic


def test_verify_canonical_refuses_and_never_raises() -> None:
    from missionweaveprotocol import crypto

    private, public = crypto.generate_keypair()
    _, other = crypto.generate_keypair()
    signature = crypto.sign_canonical({"a": 1}, private)
    assert not crypto.verify_canonical({"a": 2}, signature, public)
    assert not crypto.verify_canonical({"a": 1}, signature, other)
    assert not crypto.verify_canonical({"a": 1}, signature + "A", public)
    assert not crypto.verify_canonical({"a": 1}, signature + "=", public)
    assert not crypto.verify_canonical({"a": float("nan")}, signature, public)
    assert not crypto.verify_canonical({"a": 1}, signature, "not a key")
    assert not crypto.verify_canonical({"a": 1}, 12, public)  # type: ignore[arg-type]
    # The identity point is not a public key (strict decoding, §6.4).
    identity = bytes([1] + [0] * 31)
    assert not crypto.verify_bytes(b"m", signature, identity)
    # S + L (a malleated signature) is refused: strict, unlike the reference's verifier.
    raw = _native.decode_base64url(signature)
    assert raw is not None
    order = 2**252 + 27742317777372353535851937790883648493
    s = int.from_bytes(raw[32:], "little") + order
    malleated = _native.encode_base64url(raw[:32] + s.to_bytes(32, "little"))
    assert not crypto.verify_canonical({"a": 1}, malleated, public)


# -- store, context ------------------------------------------------------------------------


def test_stores_satisfy_authoritative_store() -> None:
    from missionweaveprotocol.store import AuthoritativeStore, InMemoryStore, SQLiteStore

    assert isinstance(InMemoryStore(), AuthoritativeStore)
    assert isinstance(SQLiteStore(), AuthoritativeStore)
    assert not isinstance(object(), AuthoritativeStore)


def test_policy_log_entries_go_into_a_snapshot_as_wire_objects() -> None:
    from datetime import datetime, timezone

    from missionweaveprotocol.context import GroupSnapshot, PolicyLogEntry
    from missionweaveprotocol.models import Principal, SignatureEnvelope

    at = datetime(2026, 7, 15, 9, 30, tzinfo=timezone.utc)
    entry = PolicyLogEntry(entry_id="urn:p:1", decision="archive", actor=Principal.system(),
                           occurred_at=at)
    snapshot = GroupSnapshot(
        snapshot_id="urn:s:1", group_id="urn:g:1", through_sequence=1, event_ids=("urn:e:1",),
        state_hash="sha256:" + "a" * 64, policy_log=(entry,), created_by=Principal.system(),
        created_at=at, signature=SignatureEnvelope(key_id="urn:k:1", created_at=at, value="x"))
    assert snapshot.policy_log[0] == {"entryId": "urn:p:1", "decision": "archive",
                                      "actor": {"type": "service", "id": "organization"},
                                      "details": {}, "occurredAt": "2026-07-15T09:30:00Z"}
    with pytest.raises(ValueError):
        PolicyLogEntry(entry_id="urn:p:1", decision="", actor=Principal.system(), occurred_at=at)


# -- registry (the reference's older Agent registry) ---------------------------------------


def test_agent_registry_accepts_only_organization_signed_cards() -> None:
    from datetime import datetime, timedelta, timezone

    from missionweaveprotocol.auth import AgentIdentity
    from missionweaveprotocol.registry import (
        AgentCard, AgentRegistry, CapabilityDescriptor, CapabilityPerformance, PresenceRecord,
        RegistryError)

    organization = AgentIdentity.generate("agent://acme/organization")
    at = datetime(2026, 7, 15, tzinfo=timezone.utc)
    card = AgentCard(agent_id="agent://acme/worker", owner="acme", version="1.0.0",
                     public_key=organization.public_key,
                     capabilities=(CapabilityDescriptor(name="text.summarise", version="1.2"),),
                     issued_at=at).signed_by(organization)
    registry = AgentRegistry(organization.public_key)
    registry.register(card)
    assert registry.card(card.agent_id) == card
    forged = card.model_copy(update={"owner": "mallory"})
    with pytest.raises(RegistryError):
        registry.register(forged)
    with pytest.raises(RegistryError):
        registry.card("agent://acme/nobody")
    with pytest.raises(ValueError):
        CapabilityDescriptor(name="NotDotted", version="1")
    record = PresenceRecord(agent_id=card.agent_id, status="online", available_slots=2,
                            heartbeat_at=at)
    registry.update_presence(record)
    assert registry.presence(card.agent_id, now=at + timedelta(seconds=5)) == record
    stale = registry.presence(card.agent_id, now=at + timedelta(seconds=31))
    assert stale is not None and stale.status == "offline" and stale.available_slots == 0
    assert registry.presence("agent://acme/other") is None
    registry.record_performance(CapabilityPerformance(
        agent_id=card.agent_id, capability="text.summarise", accepted=1, completed=1, failed=0,
        reassigned=0, human_changes_requested=0, average_deadline_variance_seconds=0.0,
        average_budget_variance=0.0))
    with pytest.raises(RegistryError):
        registry.update_presence(record.model_copy(update={"agent_id": "agent://acme/x"}))


# -- wire frames over the Rust frame parser ------------------------------------------------

SUBSCRIBE = (
    b'{"protocolVersion":"0.1","frameId":"urn:uuid:00000000-0000-4000-8000-000000000003",'
    b'"frameType":"SUBSCRIBE","subscriptionId":"urn:uuid:00000000-0000-4000-8000-000000000004",'
    b'"groups":[{"groupId":"urn:missionweaveprotocol:group:finance","afterSequence":4,'
    b'"attention":{"mentionsOnly":true}}]}'
)


def test_frames_parse_to_the_reference_models_and_encode_back() -> None:
    from missionweaveprotocol import wire

    frame = wire.parse_frame(SUBSCRIBE)
    assert isinstance(frame, wire.SubscribeFrame) and isinstance(frame, wire.Frame)
    assert frame.groups[0].after_sequence == 4 and frame.groups[0].attention is not None
    assert frame.groups[0].attention.mentions_only is True
    assert json.loads(wire.encode_frame(frame)) == json.loads(SUBSCRIBE)
    assert wire.encode_frame(frame) == wire.encode_frame(json.loads(SUBSCRIBE))
    hello = wire.HelloFrame(agent_id="urn:missionweaveprotocol:agent:a",
                            key_id="urn:missionweaveprotocol:key:a", client_nonce="bm9uY2UtMTIz")
    again = wire.parse_frame(wire.encode_frame(hello))
    assert isinstance(again, wire.HelloFrame) and again == hello
    assert isinstance(wire.parse_frame(wire.encode_frame(wire.PingFrame(
        nonce="bm9uY2U", sent_at="2026-07-15T09:30:00Z"))), wire.PingFrame)
    error = wire.parse_frame(wire.error_frame(
        "urn:uuid:00000000-0000-4000-8000-000000000010", "RATE_LIMITED", "slow down",
        "2026-07-15T00:00:00Z"))
    assert isinstance(error, wire.ErrorFrame) and error.error.code == wire.ErrorCode.RATE_LIMITED


def test_frame_refusals_come_from_the_rust_parser() -> None:
    from missionweaveprotocol import wire

    with pytest.raises(wire.FrameError) as caught:
        wire.parse_frame(SUBSCRIBE.replace(b'"afterSequence":4', b'"afterSequence":-1'))
    assert caught.value.code == "SCHEMA_VALIDATION_FAILED"
    with pytest.raises(wire.FrameError) as caught:
        wire.parse_frame(b'{"frameType":"PING","frameType":"PING"}')
    assert caught.value.code == "PROTOCOL_VIOLATION"
    # A model the schema refuses is refused when encoded (a frame id must be a URI).
    with pytest.raises(wire.FrameError):
        wire.encode_frame(wire.HelloFrame(frame_id="not a uri", agent_id="urn:a:1",
                                          key_id="urn:k:1", client_nonce="bm9uY2U"))


# -- projections from the Core's documents and back ----------------------------------------


def _approved_core() -> Any:
    from core_support import make_core
    from test_core_flow import mission_to_approval

    core = make_core()
    asyncio.run(mission_to_approval(core))
    return core


def _query(core: Any, kind: str, entity: str, **extra: Any) -> Any:
    from missionweaveprotocol.models import Query

    return asyncio.run(core.query(Query(kind=kind, entity_id=entity, **extra)))


def test_projections_read_core_documents_and_write_them_back() -> None:
    from core_support import GROUP, MISSION, OWNER, W1
    from missionweaveprotocol.models import (
        Group, Membership, MembershipStatus, Mission, MissionStatus, Role, WorkItem,
        WorkItemStatus)

    core = _approved_core()
    answer = _query(core, "mission", MISSION)
    mission = Mission.from_document(answer)
    assert mission.id == MISSION and mission.group_id == GROUP
    assert mission.status is MissionStatus.APPROVED and mission.title == mission.objective
    assert mission.owner.id == OWNER and mission.coordinator_epoch == 1
    assert mission.created_at.tzinfo is not None and mission.updated_at is None
    assert mission.protocol_document() == answer.value

    group = Group.from_document(_query(core, "group", GROUP).value)
    assert group.mission_id == MISSION and group.archived_at is None
    assert group.protocol_document() == _query(core, "group", GROUP).value

    member = _query(core, "membership", OWNER, group_id=GROUP, actor_type="human").value
    membership = Membership.from_document(member)
    assert membership.roles == (Role.MISSION_OWNER,)
    assert membership.status is MembershipStatus.ACTIVE
    assert membership.protocol_document() == member

    item_document = _query(core, "work_item", W1).value
    item = WorkItem.from_document(item_document)
    assert item.status is WorkItemStatus.VERIFIED and item.id == W1
    assert item.contract.goal == item_document["contract"]["goal"]
    assert item.protocol_document() == item_document

    # A field the document carries is written back (and validated by the core's schema).
    changed = mission.model_copy(update={"revision": mission.revision + 1})
    changed._document = mission.source_document
    assert changed.protocol_document()["revision"] == mission.revision + 1


def test_projections_refuse_what_the_document_cannot_say() -> None:
    from datetime import datetime, timezone

    from core_support import MISSION
    from missionweaveprotocol.documents import DocumentMappingError
    from missionweaveprotocol.models import Group, Membership, Mission, Principal, Role

    core = _approved_core()
    mission = Mission.from_document(_query(core, "mission", MISSION))
    # A Definition of Done criterion is an object on the wire: a new description has no
    # exact normative form.
    lossy = mission.model_copy(update={"definition_of_done": ("something else",)})
    lossy._document = mission.source_document
    with pytest.raises(DocumentMappingError) as caught:
        lossy.protocol_document()
    assert caught.value.member == "/definitionOfDone"
    # A hand-built projection has no source document: what it holds is written (a Group holds
    # every member of group.schema.json) ...
    at = datetime(2026, 7, 15, tzinfo=timezone.utc)
    group = Group(id="urn:g:1", mission_id="urn:m:1", main_conversation_id="urn:c:1",
                  created_at=at)
    assert group.protocol_document() == {
        "groupId": "urn:g:1", "missionId": "urn:m:1", "mainConversationId": "urn:c:1",
        "createdAt": "2026-07-15T00:00:00Z", "state": "active"}
    archived = group.model_copy(update={"archived_at": at, "archive_snapshot_id": "urn:s:1"})
    assert archived.protocol_document()["state"] == "archived"
    # ... and the core's schema names what it lacks (a Membership has no membershipId here).
    with pytest.raises(DocumentMappingError) as caught:
        Membership(group_id="urn:g:1", principal=Principal.agent("urn:a:1"), roles=(Role.WORKER,),
                   status="active", joined_at=at).protocol_document()
    assert caught.value.code == "SCHEMA_VALIDATION_FAILED"
    assert "membershipId" in str(caught.value)
    # A normative Membership has one role.
    member = Membership(group_id="urn:g:1", principal=Principal.agent("urn:a:1"),
                        roles=(Role.WORKER, Role.REVIEWER), status="active", joined_at=at)
    with pytest.raises(DocumentMappingError) as caught:
        member.protocol_document()
    assert caught.value.member == "/role"
    # Not a document.
    with pytest.raises(DocumentMappingError):
        Mission.from_document(["not", "an", "object"])
    bad = dict(_query(core, "mission", MISSION).value, createdAt="yesterday")
    with pytest.raises(DocumentMappingError) as caught:
        Mission.from_document(bad)
    assert caught.value.member == "/createdAt"


def test_budget_conversion_is_the_engines() -> None:
    from missionweaveprotocol.errors import InvalidInputError

    currency, limits = _native.budget_from_wire({"currency": "EUR", "financialLimit": 12.5,
                                                 "toolCallLimit": 0})
    assert currency == "EUR" and limits == (12_500_000, None, 0, None, None, None)
    assert _native.budget_to_wire("EUR", limits) == {"currency": "EUR", "financialLimit": 12.5,
                                                      "toolCallLimit": 0}
    for bad in ({"toolCallLimit": 1.5}, {"financialLimit": 1e-7, "currency": "EUR"}, [],
                {"currency": "eur"}):
        with pytest.raises(InvalidInputError):
            _native.budget_from_wire(bad)
    with pytest.raises(InvalidInputError):
        _native.budget_to_wire(None, (1, None, None, None, None, None))
    with pytest.raises(InvalidInputError):
        _native.budget_to_wire("EUR", (1, None))


def test_an_artifact_manifest_reads_and_is_returned_only_unchanged() -> None:
    from core_support import HASH_A, W1, WORKER
    from missionweaveprotocol.documents import DocumentMappingError
    from missionweaveprotocol.models import Artifact

    core = _approved_core()
    manifest = _query(core, "artifact", "urn:missionweaveprotocol:artifact:ledger").value
    artifact = Artifact.from_document(manifest)
    assert artifact.content_hash == HASH_A and artifact.work_item_id == W1
    assert artifact.producing_agent_id == WORKER and artifact.agent_card_version == 1
    assert artifact.signature == manifest["signature"]["value"]
    assert artifact.protocol_document() == manifest
    changed = artifact.model_copy(update={"media_type": "text/plain"})
    with pytest.raises(DocumentMappingError) as caught:
        changed.protocol_document()
    assert caught.value.reason == "signed-document-changed"
    assert caught.value.member == "/mediaType"


def test_messages_and_amendments_read_core_answers_and_write_them_back() -> None:
    from core_support import COORDINATOR, GROUP, create, make_core, signed
    from test_core_messages import M1, M2, post

    from missionweaveprotocol.documents import DocumentMappingError
    from missionweaveprotocol.models import Message, MessageAmendment, MessageAmendmentKind

    core = make_core()
    asyncio.run(core.perform(create()))
    asyncio.run(core.perform(post(COORDINATOR, M1)))
    asyncio.run(core.perform(signed("message.correct", COORDINATOR, {
        "messageId": M2, "targetMessageId": M1, "reason": "after approval only",
        "content": [{"type": "text", "text": "Deploy after approval."}]})))
    answer = _query(core, "message", M1, group_id=GROUP)
    message = Message.from_document(answer)
    assert message.content == "Deploy immediately." and message.author.id == COORDINATOR
    assert message.protocol_document() == answer.value["message"]
    edited = message.model_copy(update={"content": "Deploy tomorrow."})
    assert edited.protocol_document()["content"] == [{"type": "text", "text": "Deploy tomorrow."}]
    amendment = MessageAmendment.from_document(_query(core, "message", M2, group_id=GROUP))
    assert amendment.kind is MessageAmendmentKind.CORRECTION and amendment.message_id == M1
    assert amendment.replacement_content == "Deploy after approval."
    assert amendment.reason == "after approval only"
    assert amendment.protocol_document() == _query(core, "message", M2,
                                                   group_id=GROUP).value["message"]
    # Mentions are Principals on the wire and ids here: a new mention has no exact form.
    with pytest.raises(DocumentMappingError) as caught:
        message.model_copy(update={"mentions": ("urn:x:someone",)}).protocol_document()
    assert caught.value.member == "/mentions"


def test_a_delegation_grant_reads_the_cores_answer_and_writes_it_back() -> None:
    from test_core_delegation import GRANT, by_coordinator, delegate_ready, grant_payload, perform

    from missionweaveprotocol.models import DelegationGrant

    core = delegate_ready()
    perform(core, by_coordinator("membership.grant_delegation", grant_payload()))
    answer = _query(core, "delegation_grant", GRANT)
    grant = DelegationGrant.from_document(answer)
    assert grant.id == GRANT and grant.budget.currency == "EUR"
    assert grant.budget.tool_calls == 25 and grant.budget.financial_microunits == 0
    assert grant.allowed_capabilities[0].semver == "1.0.0"
    assert grant.granted_by == answer.value["grant"]["grantedBy"]["id"]
    assert grant.protocol_document() == answer.value["grant"]
    wider = grant.model_copy(update={"max_descendant_depth": 3})
    assert wider.protocol_document()["maxDescendantDepth"] == 3
    # A grantor that is not an Agent is refused by the core's rule when the document is read.
    human = dict(answer.value["grant"], grantedBy={"type": "human", "id": "urn:h:1"})
    with pytest.raises(ValueError):
        DelegationGrant.from_document(human)
