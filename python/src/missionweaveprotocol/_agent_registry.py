"""The reference's Organization Agent registry (``reference-python.md`` §1.24, its older model
set), re-exported by :mod:`missionweaveprotocol.registry`.

As in the reference, nothing in the Core uses it: the Core reads signed Agent Cards
(``agent-card.schema.json``, ``…registry.agent_card_register``). The card's Organization
signature here is the reference's non-normative one — Ed25519 over the RFC 8785 bytes of the
card without ``signature`` — produced and checked by the core's strict Ed25519
(:func:`~missionweaveprotocol.crypto.sign_bytes`, :func:`~missionweaveprotocol.crypto.verify_bytes`).

Not offered: the reference's ``Candidate`` ranking (``AgentRegistry.candidates``) and
``CapabilityPerformance.reliability``, whose formula its inventory does not give.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any, Dict, Literal, Optional, Protocol, Tuple

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from . import _native
from .canonical import canonical_bytes
from .crypto import verify_bytes


class RegistryError(ValueError):
    """A card, presence record or lookup the registry refuses."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CapabilityDescriptor(_Model):
    name: str = Field(pattern=r"^[a-z][a-z0-9_-]*(\.[a-z][a-z0-9_-]*)+$")
    version: str = Field(pattern=r"^\d+\.\d+(\.\d+)?$")
    input_schema: Dict[str, Any] = Field(default_factory=dict)
    output_schema: Dict[str, Any] = Field(default_factory=dict)
    constraints: Dict[str, Any] = Field(default_factory=dict)
    verified_evidence: Tuple[str, ...] = ()


class _Signer(Protocol):
    def sign(self, payload: bytes) -> str: ...


class AgentCard(_Model):
    agent_id: str = Field(pattern=r"^agent://.+")
    owner: str
    version: str = Field(pattern=r"^\d+\.\d+\.\d+$")
    public_key: str
    capabilities: Tuple[CapabilityDescriptor, ...]
    issued_at: AwareDatetime
    signature: str = ""

    def signing_bytes(self) -> bytes:
        """RFC 8785 bytes of the card without ``signature`` (what the Organization signs)."""
        return canonical_bytes(self.model_dump(mode="json", exclude={"signature"}))

    def signed_by(self, organization: _Signer) -> "AgentCard":
        """This card signed by ``organization`` (an ``auth.AgentIdentity`` or anything with
        ``sign(bytes) -> str``)."""
        return self.model_copy(update={"signature": organization.sign(self.signing_bytes())})


class PresenceRecord(_Model):
    agent_id: str
    status: Literal["online", "busy", "offline", "draining"]
    available_slots: int = Field(ge=0)
    capability_availability: Dict[str, int] = Field(default_factory=dict)
    estimated_response_seconds: Optional[int] = Field(default=None, ge=0)
    heartbeat_at: AwareDatetime


class CapabilityPerformance(_Model):
    agent_id: str
    capability: str
    accepted: int = Field(ge=0)
    completed: int = Field(ge=0)
    failed: int = Field(ge=0)
    reassigned: int = Field(ge=0)
    human_changes_requested: int = Field(ge=0)
    average_deadline_variance_seconds: float
    average_budget_variance: float


class AgentRegistry:
    """``AgentRegistry(organization_public_key, *, presence_ttl=30 s)``: registered cards
    (each must carry a valid Organization signature), presence (a record older than
    ``presence_ttl`` reads as offline with no slots) and performance records."""

    def __init__(
        self, organization_public_key: str, *, presence_ttl: timedelta = timedelta(seconds=30)
    ) -> None:
        problem = _native.presence_ttl_problem(presence_ttl)
        if problem is not None:
            raise RegistryError(problem)
        self._key = organization_public_key
        self._ttl = presence_ttl
        self._cards: Dict[str, AgentCard] = {}
        self._presence: Dict[str, PresenceRecord] = {}
        self._performance: Dict[Tuple[str, str], CapabilityPerformance] = {}

    def register(self, card: AgentCard) -> None:
        if not verify_bytes(card.signing_bytes(), card.signature, self._key):
            raise RegistryError(f"the Agent Card of {card.agent_id} has no valid Organization signature")
        self._cards[card.agent_id] = card

    def card(self, agent_id: str) -> AgentCard:
        try:
            return self._cards[agent_id]
        except KeyError:
            raise RegistryError(f"unknown Agent {agent_id}") from None

    def update_presence(self, record: PresenceRecord) -> None:
        self.card(record.agent_id)
        self._presence[record.agent_id] = record

    def presence(self, agent_id: str, *, now: Optional[datetime] = None) -> Optional[PresenceRecord]:
        record = self._presence.get(agent_id)
        if record is None:
            return None
        now = now if now is not None else datetime.now(timezone.utc)
        # §6.2: whether the record is stale, and what it then reads as, are the core's.
        if _native.presence_is_stale(record.heartbeat_at, now, self._ttl):
            return record.model_copy(update={
                "status": _native.PRESENCE_STALE_STATUS,
                "available_slots": _native.PRESENCE_STALE_AVAILABLE_SLOTS,
            })
        return record

    def record_performance(self, performance: CapabilityPerformance) -> None:
        self.card(performance.agent_id)
        self._performance[(performance.agent_id, performance.capability)] = performance


__all__ = [
    "AgentCard",
    "AgentRegistry",
    "CapabilityDescriptor",
    "CapabilityPerformance",
    "PresenceRecord",
    "RegistryError",
]
