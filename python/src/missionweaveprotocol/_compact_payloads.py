"""The reference's compact payload models, one per Command kind (``reference-python.md`` §1.1
"Payloads"), re-exported by :mod:`missionweaveprotocol.models`.

They describe what a Command asks for in the reference's compact vocabulary; the protocol's
wire payloads (what our Core reads and what is signed, §6.4) are the ``…WirePayload`` models of
:mod:`missionweaveprotocol.payloads`. A compact payload is never signed as is.

``OpenAgentSessionPayload`` and ``RegisterAgentCardPayload`` are not spelled out by the
reference inventory; their members here are the wire's (``agentId``; the card).
"""

from __future__ import annotations

from typing import Optional, Tuple, Union

from pydantic import Field

from ._projections import (
    AgentCard,
    Artifact,
    Checkpoint,
    ChildFailurePolicy,
    ContentHash,
    CooperationPolicyName,
    Evidence,
    GroupSnapshot,
    Identifier,
    Instant,
    NonNegativeInt,
    PositiveInt,
    PositiveSeconds,
    ResourceBudget,
    ResourceUsage,
    SelectionBasis,
    WorkContract,
)
from ._protocol_model import ProtocolModel
from .delegation import CapabilityRequirement, DelegationBudget
from .models import CommandKind, Principal, Role

_LEASE = 300


class RegisterAgentCardPayload(ProtocolModel):
    card: AgentCard


class OpenAgentSessionPayload(ProtocolModel):
    agent_id: Identifier


class CreateMissionPayload(ProtocolModel):
    mission_id: Identifier
    group_id: Identifier
    coordinator_id: Identifier
    title: str
    objective: str
    definition_of_done: Tuple[str, ...] = Field(min_length=1)
    budget: ResourceBudget = Field(default_factory=ResourceBudget)
    deadline: Instant
    permissions: Tuple[str, ...] = ()
    coordinator_lease_seconds: PositiveSeconds = _LEASE
    follow_up_of_mission_id: Optional[Identifier] = None


class CreateChildMissionPayload(ProtocolModel):
    mission_id: Identifier
    group_id: Identifier
    coordinator_id: Identifier
    title: str
    objective: str
    definition_of_done: Tuple[str, ...] = Field(min_length=1)
    budget: ResourceBudget = Field(default_factory=ResourceBudget)
    deadline: Instant
    permissions: Tuple[str, ...] = ()
    parent_work_item_id: Identifier
    failure_policy: ChildFailurePolicy = ChildFailurePolicy.BLOCK_PARENT_WORK_ITEM
    coordinator_lease_seconds: PositiveSeconds = _LEASE


class AddMembershipPayload(ProtocolModel):
    principal: Principal
    roles: Tuple[Role, ...] = Field(min_length=1)
    provisional: bool = False
    visibility_after_sequence: Optional[NonNegativeInt] = None


class EndMembershipPayload(ProtocolModel):
    principal: Principal


class ReplaceCoordinatorPayload(ProtocolModel):
    coordinator_id: Identifier
    lease_seconds: PositiveSeconds = _LEASE


class RenewCoordinatorLeasePayload(ProtocolModel):
    lease_seconds: PositiveSeconds = _LEASE


class PostMessagePayload(ProtocolModel):
    message_id: Identifier
    conversation_id: Identifier
    content: str
    mentions: Tuple[str, ...] = ()


class CorrectMessagePayload(ProtocolModel):
    amendment_id: Identifier
    message_id: Identifier
    replacement_content: str
    reason: str


class RetractMessagePayload(ProtocolModel):
    amendment_id: Identifier
    message_id: Identifier
    reason: str


class RedactMessagePayload(ProtocolModel):
    amendment_id: Identifier
    message_id: Identifier
    replacement_content: str
    reason: str


class ProposeWorkItemPayload(ProtocolModel):
    proposal_id: Identifier
    contract: WorkContract
    dependency_ids: Tuple[Identifier, ...] = ()
    parent_work_item_id: Optional[Identifier] = None


class CreateWorkItemPayload(ProtocolModel):
    work_item_id: Identifier
    contract: WorkContract
    dependency_ids: Tuple[Identifier, ...] = ()
    proposal_id: Optional[Identifier] = None
    parent_work_item_id: Optional[Identifier] = None
    delegation_grant_id: Optional[Identifier] = None


class AddWorkItemDependencyPayload(ProtocolModel):
    work_item_id: Identifier
    dependency_id: Identifier


class OfferWorkItemPayload(ProtocolModel):
    work_item_id: Identifier
    candidate_agent_ids: Tuple[Identifier, ...] = Field(min_length=1)
    selection_basis: SelectionBasis
    offer_expires_in_seconds: PositiveSeconds = _LEASE
    delegation_grant_id: Optional[Identifier] = None


class AcceptWorkOfferPayload(ProtocolModel):
    work_item_id: Identifier
    ownership_lease_seconds: PositiveSeconds = 900


class StartWorkItemPayload(ProtocolModel):
    work_item_id: Identifier
    ownership_epoch: PositiveInt
    execution_lease_seconds: PositiveSeconds = _LEASE


class RenewExecutionLeasePayload(ProtocolModel):
    work_item_id: Identifier
    ownership_epoch: PositiveInt
    execution_lease_id: Identifier
    lease_seconds: PositiveSeconds = _LEASE


class RecordResourceUsagePayload(ProtocolModel):
    work_item_id: Identifier
    ownership_epoch: PositiveInt
    execution_lease_id: Identifier
    usage_delta: ResourceUsage


class CheckpointWorkItemPayload(ProtocolModel):
    work_item_id: Identifier
    ownership_epoch: PositiveInt
    execution_lease_id: Identifier
    checkpoint: Checkpoint
    resume_within_seconds: PositiveSeconds = 900


class BlockWorkItemPayload(ProtocolModel):
    work_item_id: Identifier
    ownership_epoch: PositiveInt
    execution_lease_id: Identifier
    reason: str
    checkpoint: Checkpoint
    blocked_lease_seconds: PositiveSeconds = 900


class UnblockWorkItemPayload(ProtocolModel):
    work_item_id: Identifier


class PublishArtifactPayload(ProtocolModel):
    artifact: Artifact
    ownership_epoch: PositiveInt
    execution_lease_id: Identifier


class SubmitWorkItemPayload(ProtocolModel):
    work_item_id: Identifier
    ownership_epoch: PositiveInt
    execution_lease_id: Identifier
    artifact_ids: Tuple[Identifier, ...] = Field(min_length=1)
    evidence: Tuple[Evidence, ...] = Field(min_length=1)


class VerifyWorkItemPayload(ProtocolModel):
    work_item_id: Identifier
    evidence: Tuple[Evidence, ...] = Field(min_length=1)


class FailWorkItemPayload(ProtocolModel):
    work_item_id: Identifier
    reason: str
    ownership_epoch: Optional[PositiveInt] = None
    execution_lease_id: Optional[Identifier] = None


class CancelWorkItemPayload(ProtocolModel):
    work_item_id: Identifier
    reason: str


class SubmitMissionPayload(ProtocolModel):
    artifact_hashes: Tuple[ContentHash, ...] = Field(min_length=1)


class ApproveMissionPayload(ProtocolModel):
    approval_id: Identifier
    mission_revision: PositiveInt
    artifact_hashes: Tuple[ContentHash, ...]
    acceptance_policy_version: str
    comments: Optional[str] = None


class GrantExecutionApprovalPayload(ProtocolModel):
    approval_id: Identifier
    work_item_id: Identifier
    ownership_epoch: PositiveInt
    operations: Tuple[str, ...] = Field(min_length=1)
    resources: Tuple[str, ...] = ()
    budget: ResourceBudget = Field(default_factory=ResourceBudget)
    expires_in_seconds: PositiveSeconds = _LEASE
    comments: Optional[str] = None


class GrantCooperationOverridePayload(ProtocolModel):
    grant_id: Identifier
    policy_name: CooperationPolicyName
    beneficiary: Principal
    target_command_kind: CommandKind
    target_action_id: Identifier
    reason: str
    expires_at: Instant


class GrantDelegationPayload(ProtocolModel):
    grant_id: Identifier
    grantee_agent_id: Identifier
    target_work_item_id: Identifier
    allowed_capabilities: Tuple[CapabilityRequirement, ...] = Field(min_length=1)
    budget: DelegationBudget
    max_descendant_depth: NonNegativeInt
    expires_at: Instant


class RequestMissionChangesPayload(ProtocolModel):
    mission_revision: PositiveInt
    feedback: str


class FailMissionPayload(ProtocolModel):
    reason: str


class CancelMissionPayload(ProtocolModel):
    reason: str


class ArchiveGroupPayload(ProtocolModel):
    snapshot: GroupSnapshot


CommandPayload = Union[
    RegisterAgentCardPayload,
    OpenAgentSessionPayload,
    CreateMissionPayload,
    CreateChildMissionPayload,
    AddMembershipPayload,
    EndMembershipPayload,
    GrantDelegationPayload,
    ReplaceCoordinatorPayload,
    RenewCoordinatorLeasePayload,
    PostMessagePayload,
    CorrectMessagePayload,
    RetractMessagePayload,
    RedactMessagePayload,
    ProposeWorkItemPayload,
    CreateWorkItemPayload,
    AddWorkItemDependencyPayload,
    OfferWorkItemPayload,
    AcceptWorkOfferPayload,
    StartWorkItemPayload,
    RenewExecutionLeasePayload,
    RecordResourceUsagePayload,
    CheckpointWorkItemPayload,
    BlockWorkItemPayload,
    UnblockWorkItemPayload,
    PublishArtifactPayload,
    SubmitWorkItemPayload,
    VerifyWorkItemPayload,
    FailWorkItemPayload,
    CancelWorkItemPayload,
    SubmitMissionPayload,
    ApproveMissionPayload,
    GrantExecutionApprovalPayload,
    GrantCooperationOverridePayload,
    RequestMissionChangesPayload,
    FailMissionPayload,
    CancelMissionPayload,
    ArchiveGroupPayload,
]
"""Any compact payload (the reference's ``CommandPayload``)."""

#: The compact payload class of each Command kind (the reference's table).
PAYLOAD_MODELS = {
    CommandKind.REGISTER_AGENT_CARD: RegisterAgentCardPayload,
    CommandKind.OPEN_AGENT_SESSION: OpenAgentSessionPayload,
    CommandKind.CREATE_MISSION: CreateMissionPayload,
    CommandKind.CREATE_FOLLOW_UP_MISSION: CreateMissionPayload,
    CommandKind.CREATE_CHILD_MISSION: CreateChildMissionPayload,
    CommandKind.ADD_MEMBERSHIP: AddMembershipPayload,
    CommandKind.END_MEMBERSHIP: EndMembershipPayload,
    CommandKind.GRANT_DELEGATION: GrantDelegationPayload,
    CommandKind.REPLACE_COORDINATOR: ReplaceCoordinatorPayload,
    CommandKind.RENEW_COORDINATOR_LEASE: RenewCoordinatorLeasePayload,
    CommandKind.POST_MESSAGE: PostMessagePayload,
    CommandKind.CORRECT_MESSAGE: CorrectMessagePayload,
    CommandKind.RETRACT_MESSAGE: RetractMessagePayload,
    CommandKind.REDACT_MESSAGE: RedactMessagePayload,
    CommandKind.PROPOSE_WORK_ITEM: ProposeWorkItemPayload,
    CommandKind.CREATE_WORK_ITEM: CreateWorkItemPayload,
    CommandKind.ADD_WORK_ITEM_DEPENDENCY: AddWorkItemDependencyPayload,
    CommandKind.OFFER_WORK_ITEM: OfferWorkItemPayload,
    CommandKind.ACCEPT_WORK_OFFER: AcceptWorkOfferPayload,
    CommandKind.START_WORK_ITEM: StartWorkItemPayload,
    CommandKind.RENEW_EXECUTION_LEASE: RenewExecutionLeasePayload,
    CommandKind.RECORD_RESOURCE_USAGE: RecordResourceUsagePayload,
    CommandKind.CHECKPOINT_WORK_ITEM: CheckpointWorkItemPayload,
    CommandKind.BLOCK_WORK_ITEM: BlockWorkItemPayload,
    CommandKind.UNBLOCK_WORK_ITEM: UnblockWorkItemPayload,
    CommandKind.PUBLISH_ARTIFACT: PublishArtifactPayload,
    CommandKind.SUBMIT_WORK_ITEM: SubmitWorkItemPayload,
    CommandKind.VERIFY_WORK_ITEM: VerifyWorkItemPayload,
    CommandKind.FAIL_WORK_ITEM: FailWorkItemPayload,
    CommandKind.CANCEL_WORK_ITEM: CancelWorkItemPayload,
    CommandKind.SUBMIT_MISSION: SubmitMissionPayload,
    CommandKind.APPROVE_MISSION: ApproveMissionPayload,
    CommandKind.GRANT_EXECUTION_APPROVAL: GrantExecutionApprovalPayload,
    CommandKind.GRANT_COOPERATION_OVERRIDE: GrantCooperationOverridePayload,
    CommandKind.REQUEST_MISSION_CHANGES: RequestMissionChangesPayload,
    CommandKind.FAIL_MISSION: FailMissionPayload,
    CommandKind.CANCEL_MISSION: CancelMissionPayload,
    CommandKind.ARCHIVE_GROUP: ArchiveGroupPayload,
}

__all__ = [
    "AcceptWorkOfferPayload",
    "AddMembershipPayload",
    "AddWorkItemDependencyPayload",
    "ApproveMissionPayload",
    "ArchiveGroupPayload",
    "BlockWorkItemPayload",
    "CancelMissionPayload",
    "CancelWorkItemPayload",
    "CheckpointWorkItemPayload",
    "CommandPayload",
    "CorrectMessagePayload",
    "CreateChildMissionPayload",
    "CreateMissionPayload",
    "CreateWorkItemPayload",
    "EndMembershipPayload",
    "FailMissionPayload",
    "FailWorkItemPayload",
    "GrantCooperationOverridePayload",
    "GrantDelegationPayload",
    "GrantExecutionApprovalPayload",
    "OfferWorkItemPayload",
    "OpenAgentSessionPayload",
    "PAYLOAD_MODELS",
    "PostMessagePayload",
    "ProposeWorkItemPayload",
    "PublishArtifactPayload",
    "RecordResourceUsagePayload",
    "RedactMessagePayload",
    "RegisterAgentCardPayload",
    "RenewCoordinatorLeasePayload",
    "RenewExecutionLeasePayload",
    "ReplaceCoordinatorPayload",
    "RequestMissionChangesPayload",
    "RetractMessagePayload",
    "StartWorkItemPayload",
    "SubmitMissionPayload",
    "SubmitWorkItemPayload",
    "UnblockWorkItemPayload",
    "VerifyWorkItemPayload",
]
