"""A user file written against the reference runtime's names (issue 25), checked by
``mypy --strict`` (scripts/test-python.sh): every name imports from its reference module and the
calls type-check."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Dict, Optional

from missionweaveprotocol.context import PolicyLogEntry
from missionweaveprotocol.control import HumanIdentity
from missionweaveprotocol.crypto import generate_keypair, sign_canonical, verify_canonical
from missionweaveprotocol.models import (
    AcceptWorkOfferPayload,
    ActorType,
    AddMembershipPayload,
    AgentCard,
    Approval,
    ArchiveGroupPayload,
    Artifact,
    Capability,
    CapabilityRequirement,
    Checkpoint,
    ChildFailurePolicy,
    Conversation,
    CooperationOverrideGrant,
    CooperationPolicyName,
    CreateMissionPayload,
    CreateWorkItemPayload,
    DelegationBudget,
    DelegationGrant,
    Evidence,
    ExecutionApproval,
    GrantCooperationOverridePayload,
    GrantDelegationPayload,
    Group,
    GroupSnapshot,
    Membership,
    Message,
    MessageAmendment,
    Mission,
    OfferWorkItemPayload,
    OpenAgentSessionPayload,
    Principal,
    PublishArtifactPayload,
    RegisterAgentCardPayload,
    ResourceBudget,
    ResourceUsage,
    RetryPolicy,
    SelectionBasis,
    StartWorkItemPayload,
    SubmitWorkItemPayload,
    VerifyWorkItemPayload,
    WorkContract,
    WorkItem,
    WorkProposal,
    WorkProposalStatus,
)
from missionweaveprotocol.registry import (
    AgentCard as RegistryAgentCard,
    AgentRegistry,
    CapabilityDescriptor,
    CapabilityPerformance,
    PresenceRecord,
    RegistryError,
)
from missionweaveprotocol.store import AuthoritativeStore, InMemoryStore
from missionweaveprotocol.wire import (
    AckFrame,
    Acknowledgement,
    AttentionFilter,
    AuthFrame,
    ChallengeFrame,
    CommandFrame,
    ErrorDocument,
    ErrorFrame,
    EventFrame,
    GroupCursor,
    HelloFrame,
    PingFrame,
    SubscribeFrame,
    WelcomeFrame,
    encode_frame,
    parse_frame,
    parse_received_frame,
)

NAMES = (
    AcceptWorkOfferPayload, AddMembershipPayload, AgentCard, Approval, ArchiveGroupPayload,
    Artifact, Capability, CapabilityRequirement, Checkpoint, ChildFailurePolicy, Conversation,
    CooperationOverrideGrant, CooperationPolicyName, CreateWorkItemPayload, DelegationBudget,
    DelegationGrant, Evidence, ExecutionApproval, GrantCooperationOverridePayload,
    GrantDelegationPayload, Group, GroupSnapshot, Membership, Message, MessageAmendment,
    OfferWorkItemPayload, OpenAgentSessionPayload, PublishArtifactPayload,
    RegisterAgentCardPayload, RetryPolicy, SelectionBasis, StartWorkItemPayload,
    SubmitWorkItemPayload, VerifyWorkItemPayload, WorkContract, WorkItem, WorkProposal,
    WorkProposalStatus, RegistryAgentCard, AgentRegistry, CapabilityDescriptor,
    CapabilityPerformance, PresenceRecord, RegistryError, AckFrame, Acknowledgement,
    AttentionFilter, AuthFrame, ChallengeFrame, CommandFrame, ErrorDocument, ErrorFrame,
    EventFrame, GroupCursor, PingFrame, SubscribeFrame, WelcomeFrame, parse_received_frame,
)

AT = datetime(2026, 7, 15, tzinfo=timezone.utc)


def create_payload() -> CreateMissionPayload:
    return CreateMissionPayload(
        mission_id="mission:a", group_id="group:a", coordinator_id="agent://acme/planner",
        title="A", objective="Do A", definition_of_done=("done",), deadline=AT,
        budget=ResourceBudget(tool_calls=10),
    )


def mission_status(document: Dict[str, Any]) -> str:
    mission = Mission.from_document(document)
    back: Dict[str, Any] = mission.protocol_document()
    return f"{mission.status.value} {len(back)}"


def signed(value: object) -> bool:
    private, public = generate_keypair()
    return verify_canonical(value, sign_canonical(value, private), public)


def frames() -> str:
    hello = HelloFrame(agent_id="urn:a:1", key_id="urn:k:1", client_nonce="bm9uY2U")
    parsed = parse_frame(encode_frame(hello))
    return parsed.frame_type


def system() -> Principal:
    return Principal(type=ActorType.SYSTEM, id="organization")


def usage() -> Optional[int]:
    entry = PolicyLogEntry(entry_id="urn:p:1", decision="d", actor=system(), occurred_at=AT)
    store: AuthoritativeStore = InMemoryStore()
    return ResourceUsage(tool_calls=1).tool_calls + len(entry.decision) + store.last_sequence("g")


def compact_command(identity: "HumanIdentity") -> Dict[str, Any]:
    """Issue 25, the rule for compact models: a compact Command, converted and signed."""
    from missionweaveprotocol.models import Command, CommandKind, OpenAgentSessionPayload
    from missionweaveprotocol.scheduler import CheckpointRef, Scheduler

    command = Command(action_id="urn:a:1", kind=CommandKind.OPEN_AGENT_SESSION,
                      actor=system(), issued_at=AT,
                      payload=OpenAgentSessionPayload(agent_id="urn:a:2"))
    signed = identity.sign(command, supplement={})
    ref = CheckpointRef("c1", work_id="w", group_id="g", run_id="w:1", created_at=AT)
    records = Scheduler().snapshot().records
    assert ref.work_id is not None and len(records) >= 0 and command.compact_payload is not None
    return signed.to_wire()
