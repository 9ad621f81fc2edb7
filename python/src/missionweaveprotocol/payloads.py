"""Wire payload models: one per Command kind the engine serves, with the members it reads
(``docs/engine.md`` "Payloads", ``docs/work.md`` "Engine wiring", ``docs/engine.md``
"Artifacts"; the spec gives every payload only ``{"type": "object"}``, digest §8 item 1).

These are the protocol's wire shapes, named ``…WirePayload`` to keep them apart from the
reference's compact payload models (``CreateMissionPayload(mission_id, title, …)``), which
describe a different, non-normative projection: nothing here translates one into the other.
``Command.payload`` takes ``model.to_payload()`` (by alias, no ``None`` members). Nested
documents (Work Contracts, Evidence, checkpoints, budgets, selection bases, signed manifests)
are plain JSON objects checked by the engine against their schemas.
"""

from __future__ import annotations

from typing import Dict, List, Optional

from pydantic import Field

from ._protocol_model import ProtocolModel
from .models import JsonValue

Document = Dict[str, JsonValue]


class WirePayload(ProtocolModel):
    """Base of the wire payload models."""

    def to_payload(self) -> Document:
        """The payload as the wire carries it: by alias, without ``None`` members."""
        payload: Document = self.model_dump(mode="json", by_alias=True, exclude_none=True)
        return payload


class CoordinatorRef(ProtocolModel):
    agent_id: str
    agent_card_version: int = Field(ge=1)
    lease_id: str


class MissionCreateWirePayload(WirePayload):
    """``mission.create``."""

    mission_id: str
    objective: str
    definition_of_done: List[Document] = Field(min_length=1)
    budget: Document
    deadline: str
    approval_policy: Document
    coordinator: CoordinatorRef
    main_conversation_id: str
    group_id: Optional[str] = None
    pinned_profiles: Optional[Document] = None
    coordinator_lease_seconds: Optional[int] = Field(default=None, ge=1, le=86_400)


class MissionCreateFollowUpWirePayload(MissionCreateWirePayload):
    """``mission.create_follow_up``."""

    follow_up_to_mission_id: str


class MissionAssignCoordinatorWirePayload(WirePayload):
    """``mission.assign_coordinator``."""

    agent_id: str
    agent_card_version: int = Field(ge=1)
    lease_id: str
    lease_seconds: Optional[int] = Field(default=None, ge=1, le=86_400)


class MissionRenewCoordinatorWirePayload(WirePayload):
    """``mission.renew_coordinator``."""

    lease_seconds: Optional[int] = Field(default=None, ge=1, le=86_400)


class MissionSubmitForApprovalWirePayload(WirePayload):
    """``mission.submit_for_approval``."""

    artifact_hashes: List[str] = Field(min_length=1)


class MissionApproveWirePayload(WirePayload):
    """``mission.approve``."""

    approval_id: str
    mission_revision: int = Field(ge=1)
    artifact_hashes: List[str]
    acceptance_policy_version: Optional[str] = None
    comments: Optional[str] = None


class MissionRequestChangesWirePayload(WirePayload):
    """``mission.request_changes``."""

    mission_revision: int = Field(ge=1)
    feedback: str


class MissionCloseWirePayload(WirePayload):
    """``mission.cancel`` and ``mission.terminate``."""

    reason: str


class MemberRef(ProtocolModel):
    type: str
    id: str


class MembershipChangeWirePayload(WirePayload):
    """``membership.change``."""

    member: MemberRef
    role: str
    scopes: List[str] = Field(min_length=1)
    visibility_start_sequence: Optional[int] = Field(default=None, ge=0)
    provisional: Optional[bool] = None
    context_package_id: Optional[str] = None
    provisional_expires_at: Optional[str] = None


class MembershipEndWirePayload(WirePayload):
    """``membership.end``."""

    member: MemberRef


class WorkProposeWirePayload(WirePayload):
    """``work.propose``."""

    proposal_id: str
    contract: Document


class WorkAuthorizeWirePayload(WirePayload):
    """``work.authorize``."""

    work_item_id: str
    conversation_id: Optional[str] = None
    contract: Optional[Document] = None
    proposal_id: Optional[str] = None
    exclusive: Optional[bool] = None
    parent_work_item_id: Optional[str] = None
    delegation_grant_id: Optional[str] = None


class OfferCandidate(ProtocolModel):
    offer_id: str
    agent_id: str
    agent_card_version: int = Field(ge=1)


class WorkOfferWirePayload(WirePayload):
    """``work.offer``."""

    work_item_id: str
    candidates: List[OfferCandidate] = Field(min_length=1)
    selection_basis: Document
    offer_expires_in_seconds: Optional[int] = Field(default=None, ge=1)
    delegation_grant_id: Optional[str] = None


class WorkAcceptOfferWirePayload(WirePayload):
    """``work.accept_offer``."""

    work_item_id: str
    capability_pins: List[Document] = Field(min_length=1)
    lease_seconds: Optional[int] = Field(default=None, ge=1, le=86_400)


class WorkClaimWirePayload(WirePayload):
    """A lease-bound Worker Command: ``work.start`` (the ownership lease), the Execution Lease
    renewal (``ext.missionweaveprotocol.core.work_execution_lease_renew``, with ``progress``)."""

    work_item_id: str
    ownership_epoch: int = Field(ge=1)
    lease_id: str
    lease_seconds: Optional[int] = Field(default=None, ge=1, le=86_400)
    progress: Optional[Document] = None


class WorkCheckpointWirePayload(WorkClaimWirePayload):
    """``work.checkpoint``."""

    checkpoint: Document


class WorkBlockWirePayload(WorkClaimWirePayload):
    """``work.block``."""

    reason: str
    checkpoint: Document


class WorkUnblockWirePayload(WirePayload):
    """``work.unblock``."""

    work_item_id: str
    lease_seconds: Optional[int] = Field(default=None, ge=1, le=86_400)


class WorkSubmitWirePayload(WirePayload):
    """``work.submit``."""

    work_item_id: str
    ownership_epoch: int = Field(ge=1)
    lease_id: str
    artifact_hashes: List[str] = Field(min_length=1)
    evidence: List[Document] = Field(min_length=1)


class WorkAcceptResultWirePayload(WirePayload):
    """``work.accept_result``."""

    work_item_id: str
    evidence: List[Document] = Field(min_length=1)


class WorkFailWirePayload(WirePayload):
    """``work.fail`` (with the claim when the owning Worker reports it)."""

    work_item_id: str
    reason: str
    evidence_ids: List[str] = Field(default_factory=list)
    ownership_epoch: Optional[int] = Field(default=None, ge=1)
    lease_id: Optional[str] = None


class WorkCancelWirePayload(WirePayload):
    """``work.cancel``."""

    work_item_id: str
    reason: str


class WorkDependencyAddWirePayload(WirePayload):
    """``ext.missionweaveprotocol.core.work_dependency_add``."""

    work_item_id: str
    dependency_id: str


class ArtifactPublishWirePayload(WirePayload):
    """``artifact.publish``: the signed Artifact manifest (a normative signed document, §13.1)."""

    manifest: Document
    ownership_epoch: int = Field(ge=1)
    lease_id: str


class GroupArchiveWirePayload(WirePayload):
    """``ext.missionweaveprotocol.core.group_archive``: the Group Snapshot signed by the snapshot
    authority, the Group Authority (a normative signed document, ``group-snapshot.schema.json``,
    §7.4), covering the Group's Events ``1..head``."""

    snapshot: Document


class MembershipGrantDelegationWirePayload(WirePayload):
    """``membership.grant_delegation`` (§9.1): the engine adds ``missionId``, ``groupId``, the
    grantee's Membership Epoch, the Coordinator Epoch, ``grantedBy`` and ``grantedAt``.
    ``budget`` carries ``currency`` and all six limits; ``allowed_capabilities`` are
    ``{"id", "version"}`` minimums."""

    grant_id: str
    grantee_agent_id: str
    target_work_item_id: str
    allowed_capabilities: List[Document] = Field(min_length=1)
    budget: Document
    max_descendant_depth: int = Field(ge=0)
    expires_at: str


class PolicyGrantCooperationOverrideWirePayload(WirePayload):
    """``policy.grant_cooperation_override`` (§20): a one-shot lift of ``policy_name`` for the
    target Command ``target_action_id`` of kind ``target_command_kind`` sent by
    ``beneficiary``."""

    grant_id: str
    policy_name: str
    beneficiary: MemberRef
    target_command_kind: str
    target_action_id: str
    reason: str
    expires_at: str


class ApprovalGrantExecutionWirePayload(WirePayload):
    """``approval.grant_execution`` (§12; the reference's ``GrantExecutionApprovalPayload``
    members): a signed human decision for one WorkItem Ownership Epoch, its operations,
    resources and budget ceiling (a ``common.schema.json#/$defs/budget`` object), expiring after
    ``expires_in_seconds`` (engine default 300)."""

    approval_id: str
    work_item_id: str
    ownership_epoch: int = Field(ge=1)
    operations: List[str] = Field(min_length=1)
    resources: List[str] = Field(default_factory=list)
    budget: Optional[Document] = None
    expires_in_seconds: Optional[int] = Field(default=None, ge=1, le=86_400)
    comments: Optional[str] = None


__all__ = [
    "ApprovalGrantExecutionWirePayload",
    "ArtifactPublishWirePayload",
    "CoordinatorRef",
    "GroupArchiveWirePayload",
    "MemberRef",
    "MembershipChangeWirePayload",
    "MembershipEndWirePayload",
    "MembershipGrantDelegationWirePayload",
    "MissionApproveWirePayload",
    "MissionAssignCoordinatorWirePayload",
    "MissionCloseWirePayload",
    "MissionCreateFollowUpWirePayload",
    "MissionCreateWirePayload",
    "MissionRenewCoordinatorWirePayload",
    "MissionRequestChangesWirePayload",
    "MissionSubmitForApprovalWirePayload",
    "OfferCandidate",
    "PolicyGrantCooperationOverrideWirePayload",
    "WirePayload",
    "WorkAcceptOfferWirePayload",
    "WorkAcceptResultWirePayload",
    "WorkAuthorizeWirePayload",
    "WorkBlockWirePayload",
    "WorkCancelWirePayload",
    "WorkCheckpointWirePayload",
    "WorkClaimWirePayload",
    "WorkDependencyAddWirePayload",
    "WorkFailWirePayload",
    "WorkOfferWirePayload",
    "WorkProposeWirePayload",
    "WorkSubmitWirePayload",
    "WorkUnblockWirePayload",
]
