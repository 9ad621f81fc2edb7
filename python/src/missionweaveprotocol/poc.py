"""The §22 proof of concept over the real network (the reference's ``poc.py``,
``reference-python.md`` §1.30 and §3), run against a ``missionweaveprotocol-server`` PROCESS.

What differs from the reference, deliberately: the reference runs its Core in-process on an
in-memory store and verifies Command signatures itself; here the demo starts the Rust server as
a subprocess on an ephemeral ``127.0.0.1`` port over TLS 1.3 (``--dev``: a throwaway
certificate the clients trust, and nothing else), on a SQLite file under the work directory (or
``--database-url postgresql://…``). Every Agent is an :class:`~missionweaveprotocol.client.AgentClient`
over ``wss``; every Command is a normative document signed by its own actor's key and verified
by the server (six stages against the Organization Registry). The shared reviewer's steps 8 and
9 run in Worker processes of their own (:mod:`missionweaveprotocol._poc_worker`): the first is
killed with ``SIGKILL``, a new one restarts on its SQLite store. The human MissionOwner's Commands
go through the server's control-plane relay (``POST /control``, §15: a control plane may relay a
human's signed Command; the actor stays the human), as do the archival service's (the Group
Authority, the server's ``--policy-service``) ``…core.group_archive`` Commands (§15.2).

Deterministic: keys are seeded from principal names (``sha256("missionweaveprotocol-poc:" +
principal)``, as the reference), the server runs with ``--clock manual:2026-07-15T08:00:00Z``
(time moves only when this process writes ``advance …`` to the server's stdin, and Event IDs
are sequential), so two runs print byte-identical reports. The report names no port and no
path.

Checks (each proven by protocol evidence: Event sequence numbers and hashes are in
``evidence``) are those of the reference's list that this scenario implements, in the
reference's order; :data:`CHECK_NAMES` lists them.
"""

from __future__ import annotations

import asyncio
import hashlib
import http.client
import json
import os
import queue
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Awaitable, Callable, Dict, List, Optional, Sequence, Set, Tuple

from . import _native
from .canonical import canonical_bytes, canonical_json
from .client import AgentClient, CommandRefused
from .crypto import SigningKey
from .local_store import SQLiteAgentStore
from .registry import RegistryBuilder
from .signed_documents import SignedDocumentCodec, SignedDocumentKind

__all__ = [
    "CHECK_NAMES",
    "MissionResult",
    "OfflinePolicyError",
    "POCReport",
    "offline_command_to_wire",
    "run_poc",
    "run_poc_sync",
]

START = datetime(2026, 7, 15, 8, 0, tzinfo=timezone.utc)
ORG = "urn:missionweaveprotocol:organization:acme"
OWNER_ID = "urn:missionweaveprotocol:human:owner"
AUTHORITY = "urn:missionweaveprotocol:service:group-authority"
REGISTRAR = "urn:missionweaveprotocol:service:registrar"
COORDINATOR_AUTH = "urn:missionweaveprotocol:agent:coordinator-auth"
COORDINATOR_CLI = "urn:missionweaveprotocol:agent:coordinator-cli"
COORDINATOR_CLI_V2 = "urn:missionweaveprotocol:agent:coordinator-cli-v2"
COORDINATOR_SECURITY = "urn:missionweaveprotocol:agent:coordinator-security"
CODER = "urn:missionweaveprotocol:agent:coder"
REVIEWER = "urn:missionweaveprotocol:agent:reviewer"
AGENTS = (COORDINATOR_AUTH, COORDINATOR_CLI, COORDINATOR_CLI_V2, COORDINATOR_SECURITY, CODER, REVIEWER)
MISSION_AUTH = "urn:missionweaveprotocol:mission:authentication"
MISSION_CLI = "urn:missionweaveprotocol:mission:cli"
GROUP_AUTH = "urn:missionweaveprotocol:group:authentication"
GROUP_CLI = "urn:missionweaveprotocol:group:cli"
MISSION_SECURITY = "urn:missionweaveprotocol:mission:authentication-security"
GROUP_SECURITY = "urn:missionweaveprotocol:group:authentication-security"
CAPABILITY = {"id": "software.develop", "version": "1.0.0"}
AUTH_STAGES = ("requirements", "implementation", "tests", "review", "integration")
HASH_IN = "sha256:" + "1" * 64
HASH_OUT = "sha256:" + "2" * 64
WAIT = 30.0

#: The checks this proof of concept proves, in the order they are proven (a subset of the
#: reference's 50, named as the reference names them).
CHECK_NAMES: Tuple[str, ...] = (
    "human_control_created_signed_roots",
    "concurrent_root_missions",
    "duplicate_command_idempotent",
    "action_id_collision_rejected",
    "dynamic_dependency_committed_once",
    "human_control_signed_coordinator_replacement",
    "previous_coordinator_rejected_after_replacement",
    "previous_coordinator_command_carried_old_epoch",
    "stale_coordinator_epoch_rejected",
    "coordinator_replacement_committed",
    "blocked_checkpointed_resumed",
    "execution_lease_expiry_rejected",
    "stale_ownership_epoch_rejected",
    "ownership_epoch_advanced",
    "child_security_mission_approved",
    "real_gateway_websocket_disconnected",
    "offline_irreversible_action_rejected",
    "offline_progress_bounded",
    "stale_membership_epoch_rejected_by_gateway",
    "offline_gateway_rebase_hook_verified",
    "offline_progress_reconciled_before_side_effects",
    "offline_usage_reconciled_into_authoritative_budget",
    "real_gateway_websocket_reconnected_and_reconciled",
    "worker_to_worker_conversations",
    "signed_context_package_issued_for_late_provisional_reviewer",
    "classified_reusable_knowledge_has_event_and_artifact_provenance",
    "context_package_installed_only_in_matching_group",
    "multiple_capacity_slots_active",
    "per_group_context_isolation",
    "unsafe_work_not_preempted",
    "unsafe_checkpoint_not_preempted",
    "safe_checkpoint_only_preemption",
    "urgent_group_context_isolated",
    "preempted_work_resumed_from_checkpoint",
    "global_scheduler_served_both_groups",
    "duplicate_event_delivery_ignored",
    "worker_restart_fences_old_session",
    "sqlite_cursors_reached_contiguous_group_heads",
    "worker_restart_rebuilt_per_group_queues_from_event_replay",
    "coordinator_verification_precedes_approval",
    "human_control_signed_change_request",
    "worker_proposal_is_non_authoritative",
    "coordinator_explicitly_authorized_worker_subwork",
    "one_human_requested_changes_cycle",
    "exact_signed_human_approvals",
    "artifact_provenance_verified",
    "both_root_missions_approved",
    "signed_root_group_snapshots_cover_complete_histories",
    "snapshot_policy_logs_prove_exact_signed_human_approvals",
    "authoritative_core_archived_groups_with_signed_snapshots",
)

FAILURE_INJECTIONS: Tuple[str, ...] = (
    "action_id_collision_rejected",
    "urgent_arrival_preempts_at_a_safe_checkpoint",
    "duplicate_command_replayed",
    "duplicate_event_delivery_replayed",
    "execution_lease_expiry_rejected",
    "offline_irreversible_action_rejected",
    "offline_progress_bounded",
    "previous_coordinator_rejected_after_replacement",
    "stale_coordinator_epoch_rejected",
    "stale_membership_epoch_rejected_by_gateway",
    "stale_ownership_epoch_rejected",
    "unsafe_checkpoint_not_preempted",
    "worker_restart_fences_old_session",
)


# ---- report -------------------------------------------------------------------------------


@dataclass(frozen=True)
class MissionResult:
    mission_id: str
    group_id: str
    status: str
    revision: int
    approval_id: Optional[str]
    artifact_hashes: Tuple[str, ...]
    event_count: int

    def to_dict(self) -> Dict[str, Any]:
        return {
            "missionId": self.mission_id,
            "groupId": self.group_id,
            "status": self.status,
            "revision": self.revision,
            "approvalId": self.approval_id,
            "artifactHashes": list(self.artifact_hashes),
            "eventCount": self.event_count,
        }


@dataclass(frozen=True)
class POCReport:
    passed: bool
    checks: Tuple[Tuple[str, bool], ...]
    missions: Tuple[MissionResult, ...]
    event_counts: Tuple[Tuple[str, int], ...]
    final_cursors: Tuple[Tuple[str, int], ...]
    failure_injections: Tuple[str, ...]
    artifact_provenance_edges: int
    log_hashes: Tuple[Tuple[str, str], ...]
    evidence: Tuple[Tuple[str, str], ...] = field(default=())
    scheduler_dispatch_order: Tuple[str, ...] = field(default=())

    @property
    def failed_checks(self) -> Tuple[str, ...]:
        return tuple(name for name, ok in self.checks if not ok)

    def require_success(self) -> None:
        if not self.passed:
            raise AssertionError("failed checks: " + ", ".join(self.failed_checks))

    def to_dict(self) -> Dict[str, Any]:
        return {
            "artifactProvenanceEdges": self.artifact_provenance_edges,
            "checks": dict(self.checks),
            "eventCounts": dict(self.event_counts),
            "evidence": dict(self.evidence),
            "failureInjections": sorted(self.failure_injections),
            "finalCursors": dict(self.final_cursors),
            "logHashes": dict(self.log_hashes),
            "missions": [m.to_dict() for m in self.missions],
            "passed": self.passed,
            "schedulerDispatchOrder": list(self.scheduler_dispatch_order),
        }

    def to_json(self) -> str:
        """One line of canonical (RFC 8785) JSON."""
        return canonical_json(self.to_dict())


# ---- organization -------------------------------------------------------------------------


def __getattr__(name: str) -> Any:
    # The reference re-exports these two from its poc module; imported on first use (the
    # offline module costs tens of milliseconds of start-up the demo does not need).
    if name in ("OfflinePolicyError", "offline_command_to_wire"):
        from . import offline

        return getattr(offline, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _key(principal: str) -> SigningKey:
    seed = hashlib.sha256(f"missionweaveprotocol-poc:{principal}".encode()).digest()
    return SigningKey(f"{principal}:key-1", seed)


PRINCIPALS = [("human", OWNER_ID), ("service", AUTHORITY), ("service", REGISTRAR)] + [
    ("agent", a) for a in AGENTS
]
KEYS: Dict[str, SigningKey] = {pid: _key(pid) for _, pid in PRINCIPALS}
TYPES = {pid: kind for kind, pid in PRINCIPALS}


def _b64(data: bytes) -> str:
    return _native.encode_base64url(data)


def registry_bytes() -> bytes:
    builder = RegistryBuilder(ORG)
    for kind, pid in PRINCIPALS:
        key = KEYS[pid]
        builder.add_key(key.key_id, (kind, pid), key.public_key_bytes, "2026-01-01T00:00:00Z")
    return builder.build()


def _card(agent: str) -> Dict[str, Any]:
    key = KEYS[agent]
    card = {
        "agentId": agent, "organizationId": ORG, "cardVersion": 1,
        "displayName": agent.rsplit(":", 1)[-1], "owner": {"type": "human", "id": OWNER_ID},
        "status": "active", "protocolVersions": ["0.1"],
        "endpoints": [{"transport": "wss", "uri": "wss://agents.acme.example/a"}],
        "publicKeys": [{"keyId": key.key_id, "algorithm": "Ed25519",
                        "publicKey": _b64(key.public_key_bytes),
                        "validFrom": "2026-01-01T00:00:00Z"}],
        "capabilities": [{"id": CAPABILITY["id"], "version": CAPABILITY["version"],
                          "inputSchema": "https://schemas.acme.example/in.json",
                          "inputSchemaHash": HASH_IN,
                          "outputSchema": "https://schemas.acme.example/out.json",
                          "outputSchemaHash": HASH_OUT, "constraints": {},
                          "verifiedEvidence": ["urn:missionweaveprotocol:evidence:poc"]}],
        "maxConcurrency": 2, "issuedAt": "2026-01-01T00:00:00Z",
    }
    signed = SignedDocumentCodec().sign(SignedDocumentKind.AGENT_CARD, card, KEYS[REGISTRAR])
    value = json.loads(signed.canonical_document_bytes)
    assert isinstance(value, dict)
    return value


# ---- the server process -------------------------------------------------------------------


def _server_command() -> List[str]:
    override = os.environ.get("MISSIONWEAVEPROTOCOL_POC_SERVER")
    if override:
        return [override]
    script = Path(sys.executable).parent / "missionweaveprotocol-server"
    if script.is_file():
        return [str(script)]
    found = shutil.which("missionweaveprotocol-server")
    if found:
        return [found]
    return [sys.executable, "-c", "import sys; from missionweaveprotocol.cli import server; sys.exit(server())"]


class _Server:
    """``missionweaveprotocol-server`` as a subprocess with a controlled clock."""

    def __init__(self, root: Path, database_url: str) -> None:
        (root / "registry.json").write_bytes(registry_bytes())
        (root / "cards.json").write_text(json.dumps([_card(a) for a in AGENTS]))
        args = [
            "--registry", str(root / "cards.json"),
            "--agent-registry-snapshot", str(root / "registry.json"),
            "--database-url", database_url,
            "--authority-key-id", KEYS[AUTHORITY].key_id,
            "--authority-private-key", _b64(KEYS[AUTHORITY].seed_bytes()),
            "--organization-public-key", _b64(KEYS[REGISTRAR].public_key_bytes),
            "--host", "127.0.0.1", "--port", "0",
            "--dev", "--dev-cert", str(root / "dev-cert.pem"),
            "--clock", "manual:" + START.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "--head-poll-ms", "100",
            # The Group Authority is also the Organization's archival service (§15.2): its
            # signed `…core.group_archive` Commands go through `POST /control`.
            "--policy-service", AUTHORITY,
        ]
        env = {k: v for k, v in os.environ.items() if not k.startswith("MISSIONWEAVEPROTOCOL_")}
        env.setdefault("MISSIONWEAVEPROTOCOL_LOG", "warn")
        self.process = subprocess.Popen(
            [*_server_command(), *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, env=env,
        )
        self.lines: "queue.Queue[Optional[str]]" = queue.Queue()
        self._stderr: List[str] = []
        threading.Thread(target=self._read, args=(self.process.stdout, self.lines), daemon=True).start()
        threading.Thread(target=self._drain, daemon=True).start()
        self.url = ""
        while True:
            line = self.lines.get(timeout=60)
            if line is None:
                raise RuntimeError("the server exited before listening:\n" + "".join(self._stderr))
            if " listening on " in line:
                self.url = line.rsplit(" ", 1)[-1].strip()
                break
        self.tls = ssl.create_default_context(cafile=str(root / "dev-cert.pem"))
        self.now = START

    @staticmethod
    def _read(stream: Any, into: "queue.Queue[Optional[str]]") -> None:
        for line in stream:
            into.put(line)
        into.put(None)

    def _drain(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self._stderr.append(line)

    def advance(self, seconds: int) -> None:
        """Moves the server's clock and waits until it has moved (its ``clock …`` line)."""
        assert self.process.stdin is not None
        self.process.stdin.write(f"advance {seconds}s\n")
        self.process.stdin.flush()
        while True:
            line = self.lines.get(timeout=60)
            if line is None:
                raise RuntimeError("the server exited:\n" + "".join(self._stderr))
            if line.startswith("clock "):
                break
        self.now += timedelta(seconds=seconds)

    def control(self, command: bytes) -> List[Dict[str, Any]]:
        """``POST /control``: a human's signed Command relayed by the control plane."""
        host, port = self.url.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)
        connection = http.client.HTTPSConnection(host, int(port), context=self.tls, timeout=WAIT)
        try:
            connection.request("POST", "/control", body=command,
                               headers={"content-type": "application/json"})
            response = connection.getresponse()
            body = json.loads(response.read())
        finally:
            connection.close()
        if response.status != 200:
            raise CommandRefused(body)
        events = body["events"]
        assert isinstance(events, list)
        return events

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


# ---- commands -----------------------------------------------------------------------------


class _Actions:
    def __init__(self, prefix: str = "poc") -> None:
        self.prefix = prefix
        self.n = 0

    def next(self) -> str:
        self.n += 1
        return f"urn:missionweaveprotocol:action:{self.prefix}-{self.n}"


def _stamp(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def _event_hash(event: Dict[str, Any]) -> str:
    return "sha256:" + hashlib.sha256(canonical_bytes(event)).hexdigest()


@dataclass
class _Agent:
    agent_id: str
    client: AgentClient
    membership: Dict[str, int] = field(default_factory=dict)
    coordinator_epoch: Dict[str, int] = field(default_factory=dict)


class _World:
    def __init__(self, server: _Server, root: Path, *, actions_prefix: str = "poc") -> None:
        self.server = server
        self.root = root
        # A Worker process numbers its own Action IDs (``poc-worker-1-…``): they never collide
        # with the demo's.
        self.actions = _Actions(actions_prefix)
        self.registry = registry_bytes()
        self.agents: Dict[str, _Agent] = {}
        self.checks: List[Tuple[str, bool]] = []
        self.evidence: List[Tuple[str, str]] = []
        self.logs: Dict[str, List[Dict[str, Any]]] = {GROUP_AUTH: [], GROUP_CLI: []}
        self.missions: Dict[str, Dict[str, Any]] = {}
        self.dispatch_order: List[str] = []
        self.provenance_edges = 0
        self.workers: List[_WorkerProcess] = []

    def check(self, name: str, ok: bool, evidence: str) -> None:
        self.checks.append((name, bool(ok)))
        self.evidence.append((name, evidence))

    def document(self, kind: str, actor: str, payload: Dict[str, Any], group: Optional[str],
                 *, action_id: Optional[str] = None, **envelope: Any) -> Dict[str, Any]:
        doc: Dict[str, Any] = {
            "protocolVersion": "0.1",
            "actionId": action_id or self.actions.next(),
            "actor": {"type": TYPES[actor], "id": actor},
            "kind": kind,
            "correlationId": "urn:missionweaveprotocol:correlation:poc",
            "issuedAt": _stamp(self.server.now),
            "payload": payload,
        }
        if group is not None:
            doc["groupId"] = group
        doc.update(envelope)
        return doc

    @staticmethod
    def sign(actor: str, document: Dict[str, Any]) -> bytes:
        return SignedDocumentCodec().sign(SignedDocumentKind.COMMAND, document, KEYS[actor]).canonical_document_bytes

    def human(self, operation: str, args: Dict[str, Any], group: Optional[str] = None) -> Dict[str, Any]:
        """A ``HumanControl`` operation: the Command built by the Rust control module (the
        same builder ``HumanControl`` uses), signed by the human's key, relayed by the control
        plane. The human's projections are the Mission document from ``mission.created`` at
        the revision of the latest Mission Event the human has seen, and the Group's log
        (the human has no WebSocket session: human sessions are the approval page's)."""
        request: Dict[str, Any] = {
            "operation": operation, "humanId": OWNER_ID, "actionId": self.actions.next(),
            "issuedAt": _stamp(self.server.now), "args": args,
        }
        if group is not None:
            request["mission"] = self.mission_view(group)
            request["membership"] = {"membershipEpoch": 1}
            request["events"] = self.logs[group]
        unsigned = _native.control_command(request)
        command = SignedDocumentCodec().sign(SignedDocumentKind.COMMAND, unsigned, KEYS[OWNER_ID]).canonical_document_bytes
        events = self.server.control(command)
        for event in events:
            if event["kind"] == "mission.created":
                self.missions[event["groupId"]] = event["payload"]["mission"]
        return events[0]

    def human_command(self, kind: str, payload: Dict[str, Any], group: str) -> Dict[str, Any]:
        """A human Command the control module has no operation for (``membership.change``):
        the envelope of §15 (Group, the human's Membership Epoch, no Session Epoch)."""
        document = self.document(kind, OWNER_ID, payload, group, membershipEpoch=1)
        command = SignedDocumentCodec().sign(SignedDocumentKind.COMMAND, document, KEYS[OWNER_ID]).canonical_document_bytes
        return self.server.control(command)[0]

    def mission_view(self, group: str) -> Dict[str, Any]:
        """The Mission as the human sees it: created, at the revision of the latest Mission
        Event of the Group's log (``aggregateRevision`` of ``mission.*`` Events)."""
        mission = dict(self.missions[group])
        for event in self.logs[group]:
            if event["kind"].startswith("mission.") and "aggregateRevision" in event \
                    and event.get("payload", {}).get("missionId", mission["missionId"]) == mission["missionId"]:
                mission["revision"] = event["aggregateRevision"]
                if "state" in event.get("payload", {}):
                    mission["state"] = event["payload"]["state"]
            if event["kind"] == "mission.coordinator.assigned":
                mission["coordinator"] = dict(mission["coordinator"], **{
                    k: v for k, v in event["payload"].items() if k in ("coordinatorEpoch", "agentId")})
        return mission

    async def connect(self, agent_id: str, store: Optional[SQLiteAgentStore] = None) -> _Agent:
        client = AgentClient(
            self.server.url, agent_id=agent_id, signing_key=KEYS[agent_id], registry=self.registry,
            authority_id=AUTHORITY, ssl=self.server.tls, store=store,
            clock=lambda: self.server.now, initial_backoff=0.05,
        )
        await asyncio.wait_for(client.connect(), WAIT)
        agent = _Agent(agent_id, client)
        self.agents[agent_id] = agent
        return agent

    def agent_command(self, agent: _Agent, kind: str, payload: Dict[str, Any], group: str,
                      *, coordinator: bool = False, epoch: Optional[int] = None,
                      session_epoch: Optional[int] = None, action_id: Optional[str] = None) -> bytes:
        envelope: Dict[str, Any] = {
            "sessionEpoch": session_epoch if session_epoch is not None else agent.client.session_epoch,
            "membershipEpoch": agent.membership.get(group, 1),
        }
        if coordinator:
            envelope["coordinatorEpoch"] = epoch if epoch is not None else agent.coordinator_epoch.get(group, 1)
        return self.sign(agent.agent_id, self.document(kind, agent.agent_id, payload, group,
                                                       action_id=action_id, **envelope))

    async def send(self, agent: _Agent, command: bytes) -> Dict[str, Any]:
        event = await asyncio.wait_for(agent.client.send(command), WAIT)
        return event.document

    async def do(self, agent: _Agent, kind: str, payload: Dict[str, Any], group: str,
                 **options: Any) -> Dict[str, Any]:
        return await self.send(agent, self.agent_command(agent, kind, payload, group, **options))

    async def refused(self, agent: _Agent, command: bytes) -> Optional[str]:
        return (await self.attempt(agent, command))[0]

    async def attempt(self, agent: _Agent, command: bytes) -> Tuple[Optional[str], Optional[Dict[str, Any]]]:
        """A Command expected to be refused: its wire code, or (it was accepted) its Event, so
        the scenario goes on and the check that expected the refusal reports false."""
        try:
            event = await asyncio.wait_for(agent.client.send(command), WAIT)
        except CommandRefused as error:
            return error.code, None
        return None, event.document


# ---- the scenario -------------------------------------------------------------------------


def _create_args(mission: str, group: str, coordinator: str, objective: str) -> Dict[str, Any]:
    return {
        "missionId": mission, "groupId": group, "coordinatorId": coordinator, "title": objective,
        "objective": objective, "budget": {"modelTokenLimit": 500000, "toolCallLimit": 5000},
        "deadline": "2026-08-01T00:00:00Z", "definitionOfDone": [objective],
        "permissions": ["repo.read", "repo.write"], "coordinatorLeaseSeconds": 3600,
    }


def _contract(goal: str, depends_on: Sequence[str] = (), tool_calls: int = 10) -> Dict[str, Any]:
    return {
        "acceptanceCriteria": [{"criterionId": "c1", "description": goal,
                                "evidenceRequired": ["deterministic_test"]}],
        "allowedResources": [], "budget": {"toolCallLimit": tool_calls}, "businessImpact": "release",
        "contractVersion": 1, "deadline": "2026-12-31T00:00:00Z",
        "dependencyWorkItemIds": list(depends_on), "executionApproval": "not_required",
        "goal": goal, "inputArtifacts": [], "requestedUrgency": "normal",
        "requiredCapabilities": [CAPABILITY],
        "requiredDeliverables": [{"deliverableId": "report", "description": goal,
                                  "mediaType": "application/json",
                                  "schema": "https://example.org/report.json"}],
        "retryPolicy": {"backoff": "fixed", "maxAttempts": 3, "maxDelay": "PT1M",
                        "retryableFailures": []},
        "sideEffectRisk": "none",
    }


def _work(mission: str, stage: str) -> str:
    return f"urn:missionweaveprotocol:work:{mission.rsplit(':', 1)[-1]}-{stage}"


async def _complete(world: _World, coordinator: _Agent, worker: _Agent, mission: str, group: str,
                    item: str, sources: Sequence[str],
                    ownership: Optional[Dict[str, Any]] = None) -> str:
    """offer → accept (unless ``ownership`` is held already) → start → publish → submit →
    Coordinator verification; the Artifact hash."""
    stage = item.rsplit("-", 1)[-1]
    if ownership is None:
        ownership = await _offer_and_accept(world, coordinator, worker, group, item)
    return await _finish(world, coordinator, worker, mission, group, item, sources, ownership, stage)


async def _offer(world: _World, coordinator: _Agent, worker_id: str, group: str, item: str,
                 suffix: str = "") -> None:
    """``work.offer`` of ``item`` to ``worker_id`` alone, on a capability match."""
    await world.do(coordinator, "work.offer", {
        "candidates": [{"agentCardVersion": 1, "agentId": worker_id,
                        "offerId": f"urn:missionweaveprotocol:offer:{item.rsplit(':', 1)[-1]}{suffix}"}],
        "selectionBasis": {"authorizationEligible": True, "availabilityEstimate": "2026-07-15T09:00:00Z",
                           "expectedCost": 1.5, "policyRulesApplied": ["capability-match"],
                           "reliabilityEvidence": [], "requiredCapabilities": [CAPABILITY],
                           "verifiedMatches": [CAPABILITY]},
        "workItemId": item}, group, coordinator=True)


async def _offer_and_accept(world: _World, coordinator: _Agent, worker: _Agent, group: str,
                            item: str, suffix: str = "") -> Dict[str, Any]:
    await _offer(world, coordinator, worker.agent_id, group, item, suffix)
    accepted = await world.do(worker, "work.accept_offer",
                              {"capabilityPins": [CAPABILITY], "workItemId": item}, group)
    return dict(accepted["payload"])


async def _start(world: _World, worker: _Agent, group: str, item: str,
                 ownership: Dict[str, Any]) -> Dict[str, Any]:
    return await world.do(worker, "work.start", {
        "leaseId": ownership["ownershipLeaseId"], "ownershipEpoch": ownership["ownershipEpoch"],
        "workItemId": item}, group)


async def _finish(world: _World, coordinator: _Agent, worker: _Agent, mission: str, group: str,
                  item: str, sources: Sequence[str], ownership: Dict[str, Any], stage: str,
                  started: Optional[Dict[str, Any]] = None) -> str:
    """start (unless ``started``) → publish → submit → the Coordinator's verification."""
    content_hash = await _produce(world, worker, mission, group, item, sources, ownership, stage, started)
    await _verify(world, coordinator, group, item)
    return content_hash


async def _produce(world: _World, worker: _Agent, mission: str, group: str, item: str,
                   sources: Sequence[str], ownership: Dict[str, Any], stage: str,
                   started: Optional[Dict[str, Any]] = None) -> str:
    """The Worker's part: start (unless ``started``) → ``artifact.publish`` → ``work.submit``;
    the Artifact hash."""
    if started is None:
        started = await _start(world, worker, group, item, ownership)
    lease = started["payload"]["executionLeaseId"]
    content = f"{item}:{'|'.join(sources)}".encode()
    content_hash = "sha256:" + hashlib.sha256(content).hexdigest()
    manifest = {
        "artifactId": f"urn:missionweaveprotocol:artifact:{item.rsplit(':', 1)[-1]}",
        "classification": "internal", "contentHash": content_hash,
        "createdAt": _stamp(world.server.now), "groupId": group, "mediaType": "application/json",
        "missionId": mission, "modelVersions": [],
        "producer": {"agentCardVersion": 1, "agentId": worker.agent_id, "capabilities": [CAPABILITY]},
        "schemaUri": "https://example.org/report.json", "sizeBytes": len(content),
        "sourceArtifactHashes": list(sources), "toolVersions": [],
        "uri": f"https://artifacts.acme.example/{content_hash[7:]}", "workItemId": item,
    }
    signed_manifest = SignedDocumentCodec().sign(SignedDocumentKind.ARTIFACT, manifest, KEYS[worker.agent_id]).document
    epoch = ownership["ownershipEpoch"]
    await world.do(worker, "artifact.publish",
                   {"leaseId": lease, "manifest": signed_manifest, "ownershipEpoch": epoch}, group)
    await world.do(worker, "work.submit", {
        "artifactHashes": [content_hash],
        "evidence": [{"criterionIds": ["c1"], "evidenceId": f"urn:missionweaveprotocol:evidence:{stage}-{item[-12:]}-test".replace("--", "-"),
                      "result": "passed", "type": "deterministic_test", "workItemId": item}],
        "leaseId": lease, "ownershipEpoch": epoch, "workItemId": item}, group)
    return content_hash


async def _verify(world: _World, coordinator: _Agent, group: str, item: str) -> None:
    """The Coordinator's verification of a submitted result."""
    await world.do(coordinator, "work.accept_result", {
        "evidence": [{"criterionIds": ["c1"], "evidenceId": f"urn:missionweaveprotocol:evidence:{item.rsplit(':', 1)[-1]}-review",
                      "result": "passed", "type": "reviewer_assessment", "workItemId": item}],
        "workItemId": item}, group, coordinator=True)


async def _scenario(world: _World) -> Tuple[List[MissionResult], int]:
    server = world.server
    # Every Agent connects over wss (HELLO → Session Epoch 1).
    coordinator_auth = await world.connect(COORDINATOR_AUTH)
    coordinator_cli = await world.connect(COORDINATOR_CLI)
    coder = await world.connect(CODER)
    reviewer = await world.connect(REVIEWER)

    # 2. Two root Missions, both active from here to the end (their work interleaves), created
    # by the human through the control plane. The two requests are sent one after the other:
    # sent together, the order the server numbers their Events in would vary between runs.
    server.advance(1)
    created = [
        world.human("create", _create_args(MISSION_AUTH, GROUP_AUTH, COORDINATOR_AUTH, "Add authentication")),
        world.human("create", _create_args(MISSION_CLI, GROUP_CLI, COORDINATOR_CLI, "Ship the CLI")),
    ]
    world.check("human_control_created_signed_roots",
                all(e["kind"] == "mission.created" and e["actor"]["id"] == OWNER_ID for e in created),
                " ".join(f"{e['groupId']}#{e['sequence'] if 'sequence' in e else 1}:{_event_hash(e)}" for e in created))
    world.check("concurrent_root_missions",
                {e["groupId"] for e in created} == {GROUP_AUTH, GROUP_CLI}
                and all(e["payload"]["mission"]["state"] == "active" for e in created),
                ",".join(sorted(e["eventId"] for e in created)))
    # Coordinators subscribe to their Groups; the Worker sees only what it is a member of.
    await coordinator_auth.client.subscribe([GROUP_AUTH])
    await coordinator_cli.client.subscribe([GROUP_CLI])

    # 3. The auth stages as a dependency chain; the CLI implementation.
    server.advance(1)
    previous: List[str] = []
    for stage in AUTH_STAGES:
        item = _work(MISSION_AUTH, stage)
        await world.do(coordinator_auth, "work.authorize", {
            "contract": _contract(stage, previous), "conversationId": f"{MISSION_AUTH}:conversation:main",
            "workItemId": item}, GROUP_AUTH, coordinator=True)
        previous = [item]
    # The Coordinators admit the Workers (the reviewer is shared by both Groups).
    for coordinator, group, members in ((coordinator_auth, GROUP_AUTH, (CODER, REVIEWER)),
                                        (coordinator_cli, GROUP_CLI, (CODER, REVIEWER))):
        for member in members:
            await world.do(coordinator, "membership.change", {
                "member": {"type": "agent", "id": member}, "role": "worker",
                "scopes": ["group"]}, group, coordinator=True)
    cli_items = [_work(MISSION_CLI, "implementation"), _work(MISSION_CLI, "review")]
    await world.do(coordinator_cli, "work.authorize", {
        "contract": _contract("implementation"), "conversationId": f"{MISSION_CLI}:conversation:main",
        "workItemId": cli_items[0]}, GROUP_CLI, coordinator=True)

    # 4. Duplicate Command → identical Event; same Action ID, changed payload → collision.
    fixed = "urn:missionweaveprotocol:action:poc-dependency-review-requirements"
    dep = {"workItemId": _work(MISSION_AUTH, "review"), "dependencyId": _work(MISSION_AUTH, "requirements")}
    first_bytes = world.agent_command(coordinator_auth, "ext.missionweaveprotocol.core.work_dependency_add", dep, GROUP_AUTH,
                                      coordinator=True, action_id=fixed)
    first = await world.send(coordinator_auth, first_bytes)
    again = await world.send(coordinator_auth, first_bytes)
    world.check("duplicate_command_idempotent", first == again and first["eventId"] == again["eventId"],
                f"{first['eventId']}:{_event_hash(first)}")
    changed = dict(dep, dependencyId=_work(MISSION_AUTH, "implementation"))
    code = await world.refused(coordinator_auth, world.agent_command(
        coordinator_auth, "ext.missionweaveprotocol.core.work_dependency_add", changed, GROUP_AUTH, coordinator=True, action_id=fixed))
    world.check("action_id_collision_rejected", code == "ACTION_ID_COLLISION", str(code))
    return await _rest(world, coordinator_auth, coordinator_cli, coder, reviewer, first, cli_items)


async def _rest(world: _World, coordinator_auth: _Agent, coordinator_cli: _Agent, coder: _Agent,
                reviewer: _Agent, dependency: Dict[str, Any],
                cli_items: List[str]) -> Tuple[List[MissionResult], int]:
    server = world.server
    replay = await _replay(world, coordinator_auth, GROUP_AUTH)
    deps = [e for e in replay if e["kind"] == dependency["kind"]]
    world.check("dynamic_dependency_committed_once", len(deps) == 1,
                f"{dependency['kind']}x{len(deps)}")

    # 5. The human replaces the CLI Coordinator (epoch 2); the old one is refused, the new one
    # with the old epoch is STALE, with epoch 2 it authorizes the CLI review.
    server.advance(1)
    await _replay(world, coordinator_cli, GROUP_CLI)
    replaced = world.human("replace_coordinator", {
        "coordinatorId": COORDINATOR_CLI_V2, "leaseSeconds": 3600}, GROUP_CLI)
    world.check("human_control_signed_coordinator_replacement",
                replaced["actor"]["id"] == OWNER_ID, f"{replaced['eventId']}:{_event_hash(replaced)}")
    review_payload = {"contract": _contract("review", [cli_items[0]]),
                      "conversationId": f"{MISSION_CLI}:conversation:main", "workItemId": cli_items[1]}
    # The replacement joins the Group as its Coordinator (the human's membership.change).
    world.human_command("membership.change", {
        "member": {"type": "agent", "id": COORDINATOR_CLI_V2}, "role": "coordinator",
        "scopes": ["group"]}, GROUP_CLI)
    coordinator_v2 = await world.connect(COORDINATOR_CLI_V2)
    await coordinator_v2.client.subscribe([GROUP_CLI])
    coordinator_v2.coordinator_epoch[GROUP_CLI] = 2
    # Each of the two refused Commands authorizes the CLI review; one that is accepted (the
    # protection gone) is that authorization, so the run goes on and only its check is false.
    sender, old_command = _previous_coordinator_command(world, coordinator_cli, coordinator_v2, review_payload)
    old, accepted = await world.attempt(sender, old_command)
    world.check("previous_coordinator_rejected_after_replacement",
                old in ("AUTH_STALE_COORDINATOR", "AUTH_FORBIDDEN"), str(old))
    # The refused Command's own envelope carried the epoch the replacement superseded (§8.3):
    # read from the signed bytes sent, compared with the replacement Event's epoch.
    carried = json.loads(old_command).get("coordinatorEpoch")
    current = replaced["payload"].get("coordinator", {}).get("coordinatorEpoch")
    world.check("previous_coordinator_command_carried_old_epoch",
                old is not None and isinstance(carried, int) and isinstance(current, int)
                and carried < current,
                f"coordinatorEpoch {carried} < {current} ({replaced['eventId']}): {old}")
    stale, stale_accepted = await world.attempt(coordinator_v2, world.agent_command(
        coordinator_v2, "work.authorize", review_payload, GROUP_CLI, coordinator=True, epoch=1))
    world.check("stale_coordinator_epoch_rejected", stale == "AUTH_STALE_COORDINATOR", str(stale))
    authorized = accepted or stale_accepted or await world.do(
        coordinator_v2, "work.authorize", review_payload, GROUP_CLI, coordinator=True)
    world.check("coordinator_replacement_committed",
                authorized["kind"] == "work.authorized" and authorized["actor"]["id"] == COORDINATOR_CLI_V2,
                f"{authorized['eventId']}:{_event_hash(authorized)}")
    return await _work_and_approve(world, coordinator_auth, coordinator_v2, coder, reviewer, cli_items)


def _previous_coordinator_command(world: _World, previous: _Agent, replacement: _Agent,
                                  payload: Dict[str, Any]) -> Tuple[_Agent, bytes]:
    """The replaced Coordinator's ``work.authorize`` with the epoch it held (1), sent over its
    own session (the mutation tests send it as the current Coordinator instead)."""
    return previous, world.agent_command(previous, "work.authorize", payload, GROUP_CLI,
                                         coordinator=True, epoch=1)


async def _replay(world: _World, agent: _Agent, group: str) -> List[Dict[str, Any]]:
    """Every Event of ``group`` delivered to ``agent`` so far (drained from its subscription)."""
    head_event = await world.send(agent, world.agent_command(agent, "message.post", {
        "conversationId": f"{MISSION_AUTH if group == GROUP_AUTH else MISSION_CLI}:conversation:main",
        "messageId": f"urn:missionweaveprotocol:message:poc-{world.actions.n + 1}",
        "content": [{"type": "text", "text": "status"}]}, group))
    log = world.logs[group]
    while not log or log[-1]["eventId"] != head_event["eventId"]:
        event = await asyncio.wait_for(agent.client.next_event(group), WAIT)
        await agent.client.acknowledge(event)
        # A replacement Coordinator's subscription starts at the Group's first Event: the
        # shared log keeps each sequence once.
        if event.sequence == len(log) + 1:
            log.append(event.document)
    return log


async def _work_and_approve(world: _World, coordinator_auth: _Agent, coordinator_cli: _Agent,
                            coder: _Agent, reviewer: _Agent,
                            cli_items: List[str]) -> Tuple[List[MissionResult], int]:
    server = world.server
    hashes: Dict[str, List[str]] = {GROUP_AUTH: [], GROUP_CLI: []}
    # Lease expiry on the clock (CLI implementation, 2 s execution lease).
    server.advance(1)
    # The auth stages by the coder, the review by the shared reviewer.
    sources: List[str] = []
    for stage in AUTH_STAGES[:3]:
        item = _work(MISSION_AUTH, stage)
        if stage == "implementation":
            h = await _blocked_and_resumed(world, coordinator_auth, coder, item, sources)
        else:
            h = await _complete(world, coordinator_auth, coder, MISSION_AUTH, GROUP_AUTH, item, sources)
        hashes[GROUP_AUTH].append(h)
        sources = [h]
    await _lease_expiry(world, coordinator_cli, coder)
    await _child_mission(world, coordinator_auth, coder)
    coder = await _offline(world, coordinator_cli, coder)
    h = await _complete(world, coordinator_cli, coder, MISSION_CLI, GROUP_CLI, cli_items[0], [])
    hashes[GROUP_CLI].append(h)
    # Worker-to-Worker clarification in both Groups: the coder asks (mentioning the reviewer),
    # the reviewer answers; four Messages, each its own signed Command and Event.
    posted: List[Dict[str, Any]] = []
    for group, mission in ((GROUP_AUTH, MISSION_AUTH), (GROUP_CLI, MISSION_CLI)):
        for author, other, text in ((coder, REVIEWER, "Which edge cases matter most?"),
                                    (reviewer, CODER, "Expired tokens and empty input.")):
            posted.append(await world.do(author, "message.post", {
                "conversationId": f"{mission}:conversation:main",
                "messageId": f"urn:missionweaveprotocol:message:poc-{group.rsplit(':', 1)[-1]}-{len(posted) + 1}",
                "content": [{"type": "text", "text": text}],
                "mentions": [{"type": "agent", "id": other}]}, group))
    world.check("worker_to_worker_conversations",
                [e["kind"] for e in posted] == ["message.posted"] * 4
                and {e["actor"]["id"] for e in posted} == {CODER, REVIEWER},
                " ".join(f"{e['eventId']}" for e in posted))
    # The shared reviewer schedules the reviews of both Groups (and an urgent one).
    reviewed = await _reviews(world, coordinator_auth, coordinator_cli, reviewer,
                              auth_source=sources[0], cli_source=h, cli_review=cli_items[1])
    hashes[GROUP_AUTH].append(reviewed[GROUP_AUTH])
    hashes[GROUP_CLI].extend(reviewed[GROUP_CLI])

    async def integrate() -> None:
        # The integration cites every earlier auth stage's Artifact (requirements,
        # implementation, tests, review). The coder does it while the reviewer's Worker
        # process is down (killed, its replacement starting): the Group goes on without it.
        h = await _complete(world, coordinator_auth, coder, MISSION_AUTH, GROUP_AUTH,
                            _work(MISSION_AUTH, "integration"), list(hashes[GROUP_AUTH]))
        hashes[GROUP_AUTH].append(h)

    await _worker_restart(world, coordinator_auth, coordinator_cli, reviewer, while_down=integrate)
    missions = await _approvals(world, coordinator_auth, coordinator_cli, coder, hashes)
    return missions, world.provenance_edges


def _mission_of(group: str) -> str:
    return MISSION_AUTH if group == GROUP_AUTH else MISSION_CLI


def _worker_command() -> List[str]:
    """The reviewer's Worker process: this interpreter and this package (the mutation tests
    start it with a protection taken away)."""
    return [sys.executable, "-m", "missionweaveprotocol._poc_worker"]


class _WorkerProcess:
    """A Worker process (:mod:`missionweaveprotocol._poc_worker`): one JSON request per line on
    its stdin, one JSON answer per line on its stdout."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.process = subprocess.Popen(_worker_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)
        self._stderr: List[str] = []
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        assert self.process.stderr is not None
        with self.process.stderr:
            for line in self.process.stderr:
                self._stderr.append(line)

    async def request(self, world: _World, op: str, **fields: Any) -> Dict[str, Any]:
        """Sends one request (with the demo's clock reading) and waits for its answer."""
        self.send(world, op, **fields)
        return await self.answer()

    def send(self, world: _World, op: str, **fields: Any) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(dict(fields, op=op, now=world.server.now.isoformat())) + "\n")
        self.process.stdin.flush()

    async def answer(self) -> Dict[str, Any]:
        """The answer to the request sent last."""
        assert self.process.stdout is not None
        line = await asyncio.wait_for(asyncio.to_thread(self.process.stdout.readline), WAIT * 2)
        if not line:
            raise RuntimeError(f"the Worker process {self.name} exited ({self.process.wait()}):\n"
                               + "".join(self._stderr))
        answer = json.loads(line)
        assert isinstance(answer, dict)
        return answer

    def kill(self) -> int:
        """``SIGKILL``: no clean-up of any kind in the process (its session and store stay as
        they were); the exit status."""
        self.process.kill()
        return self.process.wait()

    def stop(self) -> None:
        """End of input: the process closes its client and store and exits."""
        assert self.process.stdin is not None and self.process.stdout is not None
        if self.process.poll() is None:
            try:
                self.process.stdin.close()
                self.process.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            try:
                stream.close()
            except OSError:  # a broken pipe to a killed process: nothing left to flush
                pass


async def _worker_restart(world: _World, coordinator_auth: _Agent, coordinator_cli: _Agent,
                          reviewer: _Agent, *, while_down: Callable[[], Awaitable[None]]) -> None:
    """Steps 8 and 9 in the reviewer's Worker process (§16; §22: kill and restart a Worker
    process). The process reads the auth Group into its SQLite store (durable Cursor, then
    ``ACK``) and accepts one ``handbook`` WorkItem per Group; the demo kills it (``SIGKILL``)
    with its session open; a new process on the same store file authenticates, is fenced from
    the old epoch, resubscribes from the durable Cursors and rebuilds its Scheduler by
    :class:`~missionweaveprotocol.replay.AgentReplay`; it dispatches, starts and submits both
    WorkItems; the Coordinators verify them. ``while_down`` runs between the kill and the new
    process's first contact with the server (meanwhile it starts, opens its store and loads
    its modules)."""
    coordinators = {GROUP_AUTH: coordinator_auth, GROUP_CLI: coordinator_cli}
    attach = {"url": world.server.url, "cafile": str(world.root / "dev-cert.pem"),
              "store": str(world.root / "reviewer-worker.sqlite3")}
    # The in-process reviewer hands over to its Worker process (started with the demo, idle
    # until now): its session is closed first.
    await reviewer.client.close()
    first = world.workers[0]
    await first.request(world, "attach", process="worker-1", restarted=False, **attach)
    head = (await _replay(world, coordinator_auth, GROUP_AUTH))[-1]["sequence"]
    read = await first.request(world, "read", group=GROUP_AUTH, head=head)
    world.check("duplicate_event_delivery_ignored",
                read["firstsRemembered"] and read["againRemembered"] == 0 and read["cursor"] == head
                and read["sequences"] == list(range(1, head + 1)),
                f"{len(read['sequences'])} Events delivered in order to the Worker process, its Cursor "
                f"#{read['cursor']}; re-delivered: {read['againRemembered']} accepted")
    # Each Coordinator hands the reviewer one more WorkItem, accepted by the process but not
    # started: queued work the restarted process must find again from the Events alone.
    pending = {GROUP_AUTH: _work(MISSION_AUTH, "handbook"), GROUP_CLI: _work(MISSION_CLI, "handbook")}
    for group, item in pending.items():
        await world.do(coordinators[group], "work.authorize", {
            "contract": _contract("handbook"), "conversationId": f"{_mission_of(group)}:conversation:main",
            "workItemId": item}, group, coordinator=True)
        await _offer(world, coordinators[group], REVIEWER, group, item)
    accepted = await first.request(world, "accept", items=[[g, i] for g, i in pending.items()])
    killed = first.kill()
    # The replacement: a process whose interpreter a supervisor keeps ready (started with the
    # demo, idle on its stdin until now: its Python start-up is off the critical path), given
    # the Worker's role only now. It opens the store file and loads its modules while the demo
    # goes on; it does not touch the server before the next request (so the Event order stays
    # fixed).
    second = world.workers[1]
    second.send(world, "attach", process="worker-2", restarted=True, **attach)
    await while_down()
    await second.answer()
    restarted = await second.request(world, "restart", oldEpoch=read["sessionEpoch"], pending=pending)
    logs = {g: await _replay(world, coordinators[g], g) for g in pending}
    epoch = read["sessionEpoch"]
    world.check("worker_restart_fences_old_session",
                killed == -signal.SIGKILL and accepted["sessionEpoch"] == epoch
                and restarted["fenced"] == "AUTH_STALE_SESSION" and restarted["sessionEpoch"] == epoch + 1,
                f"process with session epoch {epoch} killed (exit {killed}); new process epoch "
                f"{restarted['sessionEpoch']}; a Command for epoch {epoch}: {restarted['fenced']}")
    resumed = restarted["resumed"][GROUP_AUTH]
    world.check("sqlite_cursors_reached_contiguous_group_heads",
                restarted["cursors"][GROUP_AUTH] == head and resumed["sequence"] == head + 1
                and resumed["eventId"] == logs[GROUP_AUTH][head]["eventId"],
                f"durable cursor {restarted['cursors'][GROUP_AUTH]} in the store file after the kill; next delivered "
                f"#{resumed['sequence']} {resumed['eventId']}")
    replayed = restarted["replay"]
    heads = restarted["heads"]
    world.check("worker_restart_rebuilt_per_group_queues_from_event_replay",
                all(replayed[g]["rebuilt"] == [pending[g]] and replayed[g]["queued"] == [pending[g]]
                    and replayed[g]["end"] == heads[g]["sequence"] <= len(logs[g])
                    and logs[g][heads[g]["sequence"] - 1]["eventId"] == heads[g]["eventId"] for g in pending)
                and restarted["schedulerSize"] == 2,
                " ".join(f"{g}: #{replayed[g]['start']}..#{replayed[g]['end']} -> {replayed[g]['rebuilt']}"
                         for g in sorted(pending)))
    for done in restarted["submitted"]:
        await _verify(world, coordinators[done["groupId"]], done["groupId"], done["workItemId"])
    second.stop()


async def _read_until(agent: _Agent, group: str, wanted: Any) -> Dict[str, Any]:
    """Reads ``agent``'s verified deliveries of ``group`` (in order, acknowledged) until one
    satisfies ``wanted``."""
    while True:
        event = await asyncio.wait_for(agent.client.next_event(group), WAIT)
        await agent.client.acknowledge(event)
        if wanted(event.document):
            return event.document


async def _offline(world: _World, coordinator: _Agent, coder: _Agent) -> _Agent:
    """The coder's connection is cut while it works on a CLI WorkItem: it keeps working
    offline within the bounds of ``OfflineExecutionPolicy`` (reversible kinds only, at most 2
    actions, bounded usage, within the grace), buffered in its SQLite outbox; reconnected (a
    new Session Epoch, which revoked its Execution Lease, §11.3), it restarts the WorkItem and
    sends the buffered Commands rebased onto the new session and lease; the server reconciles
    them, the usage charged to the budget before the checkpoint applies (§11.5)."""
    from types import SimpleNamespace

    from .offline import OfflineExecutionPolicy, OfflineLimits, OfflinePolicyError
    from .budget import ResourceUsage

    server = world.server
    item = _work(MISSION_CLI, "changelog")
    conversation = f"{MISSION_CLI}:conversation:main"
    await world.do(coordinator, "work.authorize", {
        "contract": _contract("changelog"), "conversationId": conversation, "workItemId": item},
        GROUP_CLI, coordinator=True)
    owned = await _offer_and_accept(world, coordinator, coder, GROUP_CLI, item)
    started = (await _start(world, coder, GROUP_CLI, item, owned))["payload"]
    epoch = coder.client.session_epoch
    # The cut.
    await coder.client.close()
    world.check("real_gateway_websocket_disconnected", coder.client.session_epoch is None,
                f"session epoch {epoch}: socket closed, no session")
    outbox = SQLiteAgentStore(world.root / "coder-local.sqlite3")
    identity = SimpleNamespace(agent_id=CODER, signing_key=KEYS[CODER])
    expires = datetime.strptime(started["leaseExpiresAt"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
    policy = OfflineExecutionPolicy(outbox, identity, {
        "id": item, "group_id": GROUP_CLI, "conversation_id": conversation, "status": "active",
        "assignee_id": CODER, "ownership_epoch": started["ownershipEpoch"],
        "execution_lease_id": started["executionLeaseId"], "execution_lease_expires_at": expires,
        "session_epoch": epoch,
    }, disconnected_at=server.now, limits=OfflineLimits(timedelta(minutes=5), 2, ResourceUsage(tool_calls=4)),
        clock=lambda: server.now)

    def offline_document(kind: str, payload: Dict[str, Any]) -> Dict[str, Any]:
        # The envelope names the WorkItem (and a Message its Conversation): the offline
        # binding is checked against them (§11.5).
        extra = {"conversationId": conversation} if kind == "message.post" else {}
        return world.document(kind, CODER, payload, GROUP_CLI, sessionEpoch=epoch, membershipEpoch=1,
                              workItemId=item, **extra)

    message = offline_document("message.post", {
        "conversationId": conversation, "messageId": "urn:missionweaveprotocol:message:poc-offline-1",
        "content": [{"type": "text", "text": "changelog drafted offline"}]})
    checkpoint = offline_document("work.checkpoint", {
        "workItemId": item, "ownershipEpoch": started["ownershipEpoch"], "leaseId": started["executionLeaseId"],
        "checkpoint": {"currentPhase": "drafted offline", "completedMilestones": ["entries listed"],
                       "nextCheckpoint": "wording reviewed", "blockers": [],
                       "updatedCompletionEstimate": "2026-07-15T10:00:00Z", "evidenceIds": []}})
    server.advance(2)
    buffered = [policy.buffer(message), policy.buffer(checkpoint, usage=ResourceUsage(tool_calls=2))]
    irreversible: Optional[str] = None
    try:
        policy.buffer(offline_document("work.submit", {
            "workItemId": item, "artifactHashes": [], "evidence": [], "leaseId": started["executionLeaseId"],
            "ownershipEpoch": started["ownershipEpoch"]}))
    except OfflinePolicyError as error:
        irreversible = f"{error.code}/{error.kind}"
    world.check("offline_irreversible_action_rejected", irreversible == "INVALID_COMMAND/not_reversible",
                str(irreversible))
    bounded: Optional[str] = None
    try:
        policy.buffer(offline_document("message.post", {
            "conversationId": conversation, "messageId": "urn:missionweaveprotocol:message:poc-offline-3",
            "content": [{"type": "text", "text": "one action too many"}]}))
    except OfflinePolicyError as error:
        bounded = f"{error.code}/{error.kind}"
    world.check("offline_progress_bounded",
                bounded == "RATE_LIMITED/too_many_actions" and len(outbox.pending_actions(CODER)) == 2,
                f"{bounded}; {len(outbox.pending_actions(CODER))} buffered")
    # While the coder is away its CLI Membership is changed (epoch 1 → 2, §8: a change fences
    # every Command of the old epoch).
    changed = await world.do(coordinator, "membership.change", {
        "member": {"type": "agent", "id": CODER}, "role": "worker", "scopes": ["group"]},
        GROUP_CLI, coordinator=True)
    membership_epoch = int(changed["payload"]["membership"]["membershipEpoch"])
    # Reconnect: a new session (epoch + 1) revoked the Execution Lease; the coder reads the
    # revocation from its own subscription, restarts, and sends the outbox rebased.
    server.advance(2)
    coder2 = await world.connect(CODER)
    coder2.membership[GROUP_CLI] = membership_epoch
    await coder2.client.subscribe([GROUP_CLI])
    revoked = await _read_until(coder2, GROUP_CLI, lambda e: e["kind"].endswith("work_execution_lease_revoked")
                                and e["payload"].get("workItemId") == item)
    restarted = (await world.do(coder2, "work.start", {
        "workItemId": item, "ownershipEpoch": started["ownershipEpoch"],
        "leaseId": revoked["payload"]["leaseId"]}, GROUP_CLI))["payload"]
    # The Message rebased with the Membership epoch the coder had when it went offline: the
    # server refuses it (the rebase must take the current epoch).
    stale = offline_command_to_wire_(buffered[0], identity, coder2, restarted["executionLeaseId"],
                                     server.now, membership_epoch=1)
    stale_code = await world.refused(coder2, canonical_bytes(stale))
    world.check("stale_membership_epoch_rejected_by_gateway",
                stale_code == "MEMBERSHIP_STALE" and membership_epoch == 2,
                f"membershipEpoch 1 after {changed['eventId']} (epoch {membership_epoch}): {stale_code}")
    reconciled: List[Dict[str, Any]] = []
    rebased: List[Dict[str, Any]] = []
    for command in buffered:
        document = offline_command_to_wire_(command, identity, coder2, restarted["executionLeaseId"],
                                            server.now, membership_epoch=membership_epoch)
        events = await asyncio.wait_for(coder2.client.send(canonical_bytes(document)), WAIT)
        reconciled.append(events.document)
        rebased.append(document)
        outbox.mark_action_sent(CODER, document["actionId"])
    # The rebase hook: each outbox Command kept its Action ID and binding, took the new
    # Session Epoch, the current Membership epoch and (the checkpoint) the new lease, was
    # re-signed by the coder's key and accepted; each Event is caused by that Action ID.
    original_ids = [c.action_id for c in buffered]
    world.check("offline_gateway_rebase_hook_verified",
                [d["actionId"] for d in rebased] == original_ids
                and [e["cause"]["id"] for e in reconciled] == original_ids
                and all(d["sessionEpoch"] == coder2.client.session_epoch
                        and d["membershipEpoch"] == membership_epoch for d in rebased)
                and rebased[1]["payload"]["leaseId"] == restarted["executionLeaseId"],
                " ".join(f"{e['eventId']}<-{e['cause']['id']}" for e in reconciled))
    usage = await _read_until(coder2, GROUP_CLI, lambda e: e["kind"].endswith("resource_usage_recorded"))
    checkpointed = await _read_until(coder2, GROUP_CLI, lambda e: e["kind"] == "work.checkpointed")
    world.check("offline_progress_reconciled_before_side_effects",
                [e["kind"] for e in reconciled][0] == "message.posted"
                and checkpointed["sequence"] == usage["sequence"] + 1
                and outbox.pending_actions(CODER) == [],
                f"#{usage['sequence']} {usage['kind']} then #{checkpointed['sequence']} work.checkpointed")
    world.check("offline_usage_reconciled_into_authoritative_budget",
                usage["payload"].get("offline") is True
                and usage["payload"]["cumulativeUsage"]["toolCalls"] == 2
                and usage["payload"]["missionRemainingBudget"]["toolCalls"] == 5000 - 2,
                f"{usage['eventId']}:{_event_hash(usage)} toolCalls 2, Mission remaining "
                f"{usage['payload']['missionRemainingBudget']['toolCalls']}")
    world.check("real_gateway_websocket_reconnected_and_reconciled",
                coder2.client.session_epoch == (epoch or 0) + 1 and len(reconciled) == 2,
                f"epoch {epoch}->{coder2.client.session_epoch}; {len(reconciled)} reconciled")
    outbox.close()
    owned = dict(owned, **{k: v for k, v in checkpointed["payload"].items()
                           if k in ("ownershipLeaseId", "ownershipEpoch")})
    await _finish(world, coordinator, coder2, MISSION_CLI, GROUP_CLI, item, [], owned, "changelog")
    return coder2


def offline_command_to_wire_(command: Any, identity: Any, agent: _Agent, lease: str,
                             now: datetime, *, membership_epoch: int) -> Dict[str, Any]:
    from .offline import offline_command_to_wire as rebase

    # Only a checkpoint names a lease: it is rebased onto the new one.
    kind = command.kind if hasattr(command, "kind") else command["kind"]
    document: Dict[str, Any] = rebase(
        command, identity, session_epoch=agent.client.session_epoch or 0, membership_epoch=membership_epoch,
        issued_at=now, execution_lease_id=lease if str(getattr(kind, "value", kind)) == "work.checkpoint" else None)
    return document


async def _child_mission(world: _World, coordinator_auth: _Agent, coder: _Agent) -> None:
    """§14: the auth Coordinator promotes its security WorkItem to a child Mission with its own
    Group and Coordinator (the parent WorkItem is blocked); the coder does the child's work;
    the child's Coordinator submits; the auth Coordinator, the child's MissionOwner, approves,
    which verifies the parent WorkItem in the parent Group."""
    parent_item = _work(MISSION_AUTH, "security")
    await world.do(coordinator_auth, "work.authorize", {
        "contract": _contract("security"), "conversationId": f"{MISSION_AUTH}:conversation:main",
        "workItemId": parent_item}, GROUP_AUTH, coordinator=True)
    await world.do(coordinator_auth, "mission.create_child", {
        "parentWorkItemId": parent_item, "missionId": MISSION_SECURITY, "groupId": GROUP_SECURITY,
        "failurePolicy": "block_parent_work_item", "objective": "Security review of the login flow",
        "definitionOfDone": [{"criterionId": "threats-reviewed", "description": "Threat model reviewed",
                              "evidenceRequired": ["reviewer_assessment"]}],
        "budget": {"toolCallLimit": 5}, "deadline": "2026-07-31T00:00:00Z",
        "approvalPolicy": {"finalHumanApproval": False, "highRiskExecutionApproval": True},
        "coordinator": {"agentId": COORDINATOR_SECURITY, "agentCardVersion": 1,
                        "leaseId": "urn:missionweaveprotocol:lease:authentication-security"},
        "mainConversationId": f"{MISSION_SECURITY}:conversation:main"}, GROUP_AUTH, coordinator=True)
    security = await world.connect(COORDINATOR_SECURITY)
    await world.do(security, "membership.change", {
        "member": {"type": "agent", "id": CODER}, "role": "worker", "scopes": ["group"]},
        GROUP_SECURITY, coordinator=True)
    item = _work(MISSION_SECURITY, "threat-model")
    await world.do(security, "work.authorize", {
        "contract": _contract("threat-model", tool_calls=2), "conversationId": f"{MISSION_SECURITY}:conversation:main",
        "workItemId": item}, GROUP_SECURITY, coordinator=True)
    artifact = await _complete(world, security, coder, MISSION_SECURITY, GROUP_SECURITY, item, [])
    submitted = await world.do(security, "mission.submit_for_approval", {"artifactHashes": [artifact]},
                               GROUP_SECURITY, coordinator=True)
    approved = await world.do(coordinator_auth, "mission.approve", {
        "approvalId": f"{MISSION_SECURITY}:approval:1", "missionRevision": submitted["aggregateRevision"],
        "artifactHashes": [artifact]}, GROUP_SECURITY)
    log = await _replay(world, coordinator_auth, GROUP_AUTH)
    verified = [e for e in log if e["kind"] == "work.result.accepted"
                and e["payload"].get("workItemId", e.get("workItemId")) == parent_item]
    created = [e for e in log if e["kind"] == "mission.child.created"
               and e["payload"].get("childMissionId") == MISSION_SECURITY]
    world.check("child_security_mission_approved",
                len(created) == 1 and approved["kind"] == "mission.approved"
                and approved["actor"]["id"] == COORDINATOR_AUTH and len(verified) == 1
                and verified[0]["payload"].get("childMissionId") == MISSION_SECURITY
                and verified[0]["payload"].get("previousState") == "blocked",
                f"{created[0]['eventId'] if created else None} {approved['eventId']}:{_event_hash(approved)} -> "
                + (f"{verified[0]['eventId']}:{_event_hash(verified[0])}" if verified else "parent not verified"))
    await security.client.close()


async def _lease_expiry(world: _World, coordinator: _Agent, coder: _Agent) -> str:
    """An Execution Lease of 2 s expires on the server's clock: its renewal is refused; a new
    ``work.start`` under the same ownership gets a fresh lease and the work completes."""
    item = _work(MISSION_CLI, "docs")
    await world.do(coordinator, "work.authorize", {
        "contract": _contract("docs"), "conversationId": f"{MISSION_CLI}:conversation:main",
        "workItemId": item}, GROUP_CLI, coordinator=True)
    accepted = await _offer_and_accept(world, coordinator, coder, GROUP_CLI, item)
    started = (await world.do(coder, "work.start", {
        "leaseId": accepted["ownershipLeaseId"], "ownershipEpoch": accepted["ownershipEpoch"],
        "workItemId": item, "leaseSeconds": 2}, GROUP_CLI))["payload"]
    world.server.advance(3)
    code = await world.refused(coder, world.agent_command(
        coder, "ext.missionweaveprotocol.core.work_execution_lease_renew", {
            "leaseId": started["executionLeaseId"], "ownershipEpoch": started["ownershipEpoch"],
            "workItemId": item, "leaseSeconds": 60}, GROUP_CLI))
    world.check("execution_lease_expiry_rejected", code == "WORK_LEASE_EXPIRED",
                f"{started['executionLeaseId']} expired at {started['leaseExpiresAt']}: {code}")
    # The ownership lapses too; the Coordinator offers the WorkItem again and the new ownership
    # has a higher Ownership Epoch: the old epoch is refused.
    world.server.advance(400)
    again = await _offer_and_accept(world, coordinator, coder, GROUP_CLI, item, "-again")
    # A start accepted (the protection gone) is the start the work goes on under.
    stale, started_anyway = await world.attempt(coder, world.agent_command(coder, "work.start", {
        "leaseId": accepted["ownershipLeaseId"], "ownershipEpoch": accepted["ownershipEpoch"],
        "workItemId": item}, GROUP_CLI))
    world.check("stale_ownership_epoch_rejected", stale == "WORK_STALE_OWNERSHIP",
                f"epoch {accepted['ownershipEpoch']}: {stale}")
    world.check("ownership_epoch_advanced", again["ownershipEpoch"] == accepted["ownershipEpoch"] + 1,
                f"{accepted['ownershipEpoch']}->{again['ownershipEpoch']}")
    return await _finish(world, coordinator, coder, MISSION_CLI, GROUP_CLI, item, [], again, "docs",
                         started=started_anyway)


def _checkpoint(phase: str) -> Dict[str, Any]:
    return {"currentPhase": phase, "completedMilestones": ["read the contract"],
            "nextCheckpoint": "tests written", "blockers": [],
            "updatedCompletionEstimate": "2026-07-15T10:00:00Z", "evidenceIds": []}


async def _blocked_and_resumed(world: _World, coordinator: _Agent, coder: _Agent, item: str,
                               sources: Sequence[str]) -> str:
    """The auth implementation (§11.2's table): started, checkpointed (lease released, back
    to ``queued``), started again, blocked with a checkpoint, unblocked by the Coordinator
    (``queued``), started a third time and completed."""
    owned = await _offer_and_accept(world, coordinator, coder, GROUP_AUTH, item)
    started = (await _start(world, coder, GROUP_AUTH, item, owned))["payload"]
    checkpointed = await world.do(coder, "work.checkpoint", {
        "workItemId": item, "leaseId": started["executionLeaseId"],
        "ownershipEpoch": started["ownershipEpoch"], "checkpoint": _checkpoint("schema drafted")}, GROUP_AUTH)
    owned = dict(owned, **{k: v for k, v in checkpointed["payload"].items()
                           if k in ("ownershipLeaseId", "ownershipEpoch")})
    started = (await _start(world, coder, GROUP_AUTH, item, owned))["payload"]
    blocked = await world.do(coder, "work.block", {
        "workItemId": item, "leaseId": started["executionLeaseId"],
        "ownershipEpoch": started["ownershipEpoch"], "reason": "needs the token signing key",
        "checkpoint": _checkpoint("handlers written")}, GROUP_AUTH)
    unblocked = await world.do(coordinator, "work.unblock", {"workItemId": item}, GROUP_AUTH, coordinator=True)
    owned = dict(owned, **{k: v for k, v in unblocked["payload"].items()
                           if k in ("ownershipLeaseId", "ownershipEpoch")})
    resumed = await _start(world, coder, GROUP_AUTH, item, owned)
    chain = [checkpointed, blocked, unblocked, resumed]
    world.check("blocked_checkpointed_resumed",
                [e["kind"] for e in chain] == ["work.checkpointed", "work.blocked", "work.unblocked", "work.started"]
                and bool(blocked["payload"].get("checkpoint")) and resumed["payload"]["ownershipEpoch"] == owned["ownershipEpoch"],
                " ".join(f"{e['kind']}:{e['eventId']}:{_event_hash(e)}" for e in chain))
    return await _finish(world, coordinator, coder, MISSION_AUTH, GROUP_AUTH, item, sources, owned,
                         "implementation", started=resumed)


async def _reviews(world: _World, coordinator_auth: _Agent, coordinator_cli: _Agent, reviewer: _Agent,
                   *, auth_source: str, cli_source: str, cli_review: str) -> Dict[str, Any]:
    """The shared reviewer's Scheduler (§11): both reviews admitted into per-Group queues,
    dispatched into two slots at once; an urgent CLI review arrives; the running auth review
    is preempted only after its durable safe checkpoint (a ``work.checkpoint`` Event), resumed
    from it afterwards. Every dispatch is a ``work.start`` on the server."""
    from .scheduler import GroupSchedulingPolicy, Scheduler, SchedulerPolicy, WorkOffer, WorkTransition
    from ._native import CheckpointRef, Dispatch, Preempt

    server = world.server
    auth_review = _work(MISSION_AUTH, "review")
    urgent = _work(MISSION_CLI, "urgent-review")
    coordinators = {GROUP_AUTH: coordinator_auth, GROUP_CLI: coordinator_cli}
    missions = {GROUP_AUTH: MISSION_AUTH, GROUP_CLI: MISSION_CLI}
    scheduler = Scheduler(SchedulerPolicy(
        capacity_slots=2,
        groups={GROUP_AUTH: GroupSchedulingPolicy(weight=2, slot_quota=1),
                GROUP_CLI: GroupSchedulingPolicy(weight=1, slot_quota=2)},
        supported_capabilities=[(CAPABILITY["id"], CAPABILITY["version"])],
    ), clock=lambda: server.now)
    owned: Dict[str, Dict[str, Any]] = {}
    group_of = {auth_review: GROUP_AUTH, cli_review: GROUP_CLI, urgent: GROUP_CLI}
    for item in (auth_review, cli_review):
        owned[item] = await _offer_and_accept(world, coordinators[group_of[item]], reviewer, group_of[item], item)
        scheduler.admit(WorkOffer(item, group_of[item], organizational_priority=0,
                                  capability=(CAPABILITY["id"], CAPABILITY["version"])))
    order: List[str] = []
    running: Dict[str, Dict[str, Any]] = {}
    generations: Dict[str, int] = {}
    dispatches: Dict[str, Any] = {}
    session = await _install_contexts(world, coordinator_auth, reviewer, scheduler, auth_source)

    async def dispatch(actions: Sequence[Any]) -> List[str]:
        dispatched = []
        for action in actions:
            if isinstance(action, Dispatch):
                dispatches[action.work_id] = action
                group = group_of[action.work_id]
                running[action.work_id] = await _start(world, reviewer, group, action.work_id, owned[action.work_id])
                generations[action.work_id] = action.generation
                order.append(f"{group.rsplit(':', 1)[-1]}:{action.work_id.rsplit(':', 1)[-1]}")
                dispatched.append(action.work_id)
        return dispatched

    first = await dispatch(scheduler.schedule())
    world.check("multiple_capacity_slots_active",
                sorted(first) == sorted([auth_review, cli_review]) and scheduler.used_slots == 2,
                " ".join(f"{running[w]['eventId']}" for w in sorted(first)))
    contexts = {w: session.prepare(dispatches[w]) for w in first}
    world.check("per_group_context_isolation", _isolated(contexts, group_of) and len(contexts) == 2,
                " ".join(f"{w.rsplit(':', 1)[-1]}:{c.group_id}@{c.context_revision}/{sorted(c.credentials)}"
                         for w, c in sorted(contexts.items())))
    # The urgent arrival (priority 100).
    await world.do(coordinator_cli, "work.authorize", {
        "contract": _contract("urgent-review"), "conversationId": f"{MISSION_CLI}:conversation:main",
        "workItemId": urgent}, GROUP_CLI, coordinator=True)
    owned[urgent] = await _offer_and_accept(world, coordinator_cli, reviewer, GROUP_CLI, urgent)
    scheduler.admit(WorkOffer(urgent, GROUP_CLI, organizational_priority=100,
                              capability=(CAPABILITY["id"], CAPABILITY["version"])))
    actions = scheduler.schedule()
    requested = [a for a in actions if isinstance(a, Preempt)]
    world.check("unsafe_work_not_preempted",
                not [a for a in actions if isinstance(a, Dispatch)] and auth_review in running,
                f"preemption requested of {[a.work_id.rsplit(':', 1)[-1] for a in requested]}; nothing dispatched before a checkpoint")
    victim = requested[0].work_id if requested else auth_review
    # A checkpoint held only in memory (not durable) does not free the slot (§11.3): the report
    # is refused, the item stays preempting, and still nothing is dispatched.
    from .scheduler import SchedulerError, WorkState

    volatile: Optional[str] = None
    try:
        scheduler.apply(WorkTransition(victim, "preempted", generation=generations[victim],
                                       checkpoint=CheckpointRef(f"{victim}:checkpoint:volatile",
                                                                durable=False, safe=True)))
    except SchedulerError as error:
        volatile = getattr(error, "code", type(error).__name__)
    still = scheduler.schedule()
    world.check("unsafe_checkpoint_not_preempted",
                volatile is not None and scheduler.state(victim) is WorkState.PREEMPTING
                and not [a for a in still if isinstance(a, Dispatch)] and scheduler.used_slots == 2,
                f"non-durable checkpoint of {victim.rsplit(':', 1)[-1]}: {volatile}; slots {scheduler.used_slots}/2")
    # The item the Scheduler asked to preempt records a durable, safe checkpoint on the server
    # (§11.3): its Execution Lease is released and the WorkItem is queued again.
    group = group_of[victim]
    server.advance(1)
    started = running.pop(victim)["payload"]
    checkpoint_id = f"{victim}:checkpoint:1"
    checkpointed = await world.do(reviewer, "work.checkpoint", {
        "workItemId": victim, "leaseId": started["executionLeaseId"],
        "ownershipEpoch": started["ownershipEpoch"],
        "checkpoint": {"currentPhase": "review half done", "completedMilestones": ["read the diff"],
                       "nextCheckpoint": "comments written", "blockers": [],
                       "updatedCompletionEstimate": "2026-07-15T10:00:00Z", "evidenceIds": []}}, group)
    owned[victim] = dict(owned[victim], **{
        k: v for k, v in checkpointed["payload"].items() if k in ("ownershipLeaseId", "ownershipEpoch")})
    scheduler.apply(WorkTransition(victim, "preempted" if requested else "checkpoint_saved",
                                   generation=generations[victim],
                                   checkpoint=CheckpointRef(checkpoint_id, durable=True, safe=True)))
    after_checkpoint = await dispatch(scheduler.schedule())
    world.check("safe_checkpoint_only_preemption", bool(requested) and after_checkpoint == [urgent],
                f"{checkpointed['eventId']}:{_event_hash(checkpointed)} then "
                f"{running[after_checkpoint[0]]['eventId'] if after_checkpoint else None}")
    urgent_context = session.prepare(dispatches[urgent]) if urgent in dispatches else None
    world.check("urgent_group_context_isolated",
                urgent_context is not None and _isolated({urgent: urgent_context}, group_of),
                f"{urgent_context.group_id}@{urgent_context.context_revision}/{sorted(urgent_context.credentials)}"
                if urgent_context is not None else "not dispatched")
    hashes: Dict[str, Any] = {GROUP_CLI: []}
    sources_of = {auth_review: [auth_source], cli_review: [cli_source], urgent: [cli_source]}

    async def finish(item: str) -> str:
        group = group_of[item]
        h = await _finish(world, coordinators[group], reviewer, missions[group], group, item,
                          sources_of[item], owned[item], item.rsplit("-", 1)[-1], started=running.pop(item))
        scheduler.apply(WorkTransition(item, "completed", generation=generations[item]))
        return h

    for item in list(running):
        done = await finish(item)
        if group_of[item] == GROUP_AUTH:
            hashes[GROUP_AUTH] = done
        else:
            hashes[GROUP_CLI].append(done)
    resumed = scheduler.schedule()
    resumes = [a for a in resumed if isinstance(a, Dispatch) and a.work_id == victim]
    await dispatch(resumed)
    world.check("preempted_work_resumed_from_checkpoint",
                len(resumes) == 1 and resumes[0].resume_from is not None
                and resumes[0].resume_from.checkpoint_id == checkpoint_id,
                f"{running[victim]['eventId'] if victim in running else None} from {checkpoint_id}")
    while running:
        item = next(iter(running))
        done = await finish(item)
        if group_of[item] == GROUP_AUTH:
            hashes[GROUP_AUTH] = done
        else:
            hashes[GROUP_CLI].append(done)
        await dispatch(scheduler.schedule())
    world.dispatch_order = order
    world.check("global_scheduler_served_both_groups",
                {o.split(":", 1)[0] for o in order} == {"authentication", "cli"} and len(order) == 4,
                " ".join(order))
    return hashes


#: Per-Group credentials the reviewer's runtime holds (§12: a Group's credentials are never
#: offered to another Group's work).
_CREDENTIALS = {GROUP_AUTH: {"repository": "auth-service", "token": "auth-scoped"},
                GROUP_CLI: {"repository": "cli", "token": "cli-scoped"}}


def _isolated(contexts: Dict[str, Any], group_of: Dict[str, str]) -> bool:
    """Each prepared execution context holds its own Group's context and credentials only:
    the auth Context Package in the auth Group, none of it in the CLI Group."""
    for work, context in contexts.items():
        group = group_of[work]
        has_package = "contextPackageHash" in context.values
        if context.group_id != group or dict(context.credentials) != _CREDENTIALS[group]:
            return False
        if has_package != (group == GROUP_AUTH) or context.values.get("groupId", group) != group:
            return False
    return True


async def _install_contexts(world: _World, coordinator_auth: _Agent, reviewer: _Agent,
                            scheduler: Any, artifact_hash: str) -> Any:
    """§13.3: the auth Coordinator signs a Context Package over the auth Group's whole log so
    far for the reviewer (which joined after the work began) and a classified knowledge
    publication of it; the reviewer's runtime session installs the package in the auth Group
    only, and each Group's credentials in that Group."""
    from .agent import AgentRuntime
    from .context import ContextPackageService, KnowledgePublisher
    from .errors import ContextPackageError
    from .models import ActorType, Event, Principal
    from .registry import AgentRegistryKeyResolver

    log = await _replay(world, coordinator_auth, GROUP_AUTH)
    key = KEYS[COORDINATOR_AUTH]
    service = ContextPackageService(agent_id=COORDINATOR_AUTH, key_id=key.key_id, private_key=key,
                                    public_key=key)
    events = [Event.from_signed_bytes(canonical_bytes(e)) for e in log]
    package = service.publish(
        mission_id=MISSION_AUTH, group_id=GROUP_AUTH, version=1, events=events,
        summary="Authentication: requirements, implementation and tests done; review next.",
        artifact_hashes=[artifact_hash], constraints=["tokens expire after 15 minutes"],
        generated_at=world.server.now,
        context_package_id="urn:missionweaveprotocol:context-package:authentication-1")
    service.verify(package, key_resolver=AgentRegistryKeyResolver(world.registry))
    tampered: Optional[str] = None
    try:
        service.verify(package.model_copy(update={"summary": "Nothing to review."}))
    except Exception as error:  # the codec's stage error: the check records its class
        tampered = type(error).__name__
    span = package.source_event_range
    world.check("signed_context_package_issued_for_late_provisional_reviewer",
                span.from_sequence == 1 and span.to_sequence == log[-1]["sequence"]
                and list(span.event_ids) == [e["eventId"] for e in log] and tampered is not None,
                f"{package.context_package_id} v{package.version} Events #1..#{span.to_sequence} "
                f"signed by {key.key_id}; altered summary: {tampered}")
    publisher = KnowledgePublisher(publisher=Principal(type=ActorType.AGENT, id=COORDINATOR_AUTH),
                                   key_id=key.key_id, private_key=key, public_key=key)
    publication = publisher.publish(
        context=package, artifact_hash=artifact_hash, target_scope=ORG, classification="internal",
        summary="Token expiry and empty-input cases are the edge cases that matter.",
        published_at=world.server.now, publication_id="urn:missionweaveprotocol:knowledge:authentication-1")
    publisher.verify(publication, context=package)
    published = {e["payload"]["artifact"]["contentHash"] for e in log
                 if e["kind"] == "artifact.published" and isinstance(e["payload"].get("artifact"), dict)}
    world.check("classified_reusable_knowledge_has_event_and_artifact_provenance",
                publication.classification == "internal"
                and list(publication.provenance_event_ids) == list(span.event_ids)
                and publication.artifact_hash in published
                and publication.source_context_package_id == package.context_package_id,
                f"{publication.publication_id} internal: {len(publication.provenance_event_ids)} Events, "
                f"Artifact {publication.artifact_hash}")
    runtime = AgentRuntime(REVIEWER, scheduler)
    session = runtime.start_session(reviewer.client.session_epoch or 1)
    wrong: Optional[str] = None
    try:
        service.install(package, session, expected_mission_id=MISSION_CLI)
    except ContextPackageError as error:
        wrong = error.code
    service.install(package, session, expected_mission_id=MISSION_AUTH)
    session.install_group_context(GROUP_CLI, {"groupId": GROUP_CLI, "missionId": MISSION_CLI}, revision=1)
    for group, credentials in _CREDENTIALS.items():
        session.install_group_credentials(group, credentials, revision=1)
    world.check("context_package_installed_only_in_matching_group", wrong is not None,
                f"installed in {GROUP_AUTH} at revision {package.version}; into {MISSION_CLI}: {wrong}")
    return session


def _last(log: List[Dict[str, Any]], kind: str) -> Optional[Dict[str, Any]]:
    found = [e for e in log if e["kind"] == kind]
    return found[-1] if found else None


def _snapshots(world: _World, results: List[MissionResult]) -> Dict[str, Any]:
    """§7.4: the archival service (the Group Authority, whose key this demo configures the
    server with) signs a snapshot of each root Group's complete history, ``1..head``, with a
    policy log naming the human's approval Event; a snapshot that misses the first Event is
    refused."""
    from .context import SnapshotArchive
    from .models import ActorType, Event, Principal

    authority = KEYS[AUTHORITY]
    archive = SnapshotArchive(authority=Principal(type=ActorType.SERVICE, id=AUTHORITY), key_id=authority.key_id,
                              private_key=authority, public_key=authority)
    covered: List[bool] = []
    proven: List[bool] = []
    signed: Dict[str, Any] = {}
    notes: List[str] = []
    for result in results:
        log = world.logs[result.group_id]
        approved = _last(log, "mission.approved")
        submitted = _last(log, "mission.submitted_for_approval")
        assert approved is not None and submitted is not None
        entry = {
            "entryId": f"urn:missionweaveprotocol:policy:{result.group_id.rsplit(':', 1)[-1]}-approval",
            "decision": "verified exact signed human approval before archiving",
            "actor": {"type": "service", "id": AUTHORITY},
            "details": {"approvalEventId": approved["eventId"], "approvalEventHash": _event_hash(approved),
                        "approvalId": approved["payload"].get("approvalId"),
                        "artifactHashes": approved["payload"].get("artifactHashes", []),
                        "missionRevision": approved["aggregateRevision"]},
            "occurredAt": _stamp(world.server.now),
        }
        events = [Event.from_signed_bytes(canonical_bytes(e)) for e in log]
        snapshot = archive.archive(
            group_id=result.group_id, events=events, state=result.to_dict(), policy_log=[entry],
            created_at=world.server.now,
            snapshot_id=f"urn:missionweaveprotocol:snapshot:{result.group_id.rsplit(':', 1)[-1]}")
        archive.verify(snapshot)
        signed[result.group_id] = snapshot
        gap: Optional[str] = None
        try:
            archive.archive(group_id=result.group_id, events=events[1:], state=result.to_dict(),
                            policy_log=[entry], created_at=world.server.now)
        except ValueError as error:
            gap = getattr(error, "reason", type(error).__name__)
        covered.append(snapshot.through_sequence == log[-1]["sequence"]
                       and list(snapshot.event_ids) == [e["eventId"] for e in log] and gap is not None)
        details = snapshot.policy_log[0]["details"]
        assert isinstance(details, dict)
        proven.append(details["approvalEventId"] in snapshot.event_ids
                      and details["approvalEventHash"] == _event_hash(approved)
                      and approved["actor"] == {"type": "human", "id": OWNER_ID}
                      and details["artifactHashes"] == submitted["payload"]["artifactHashes"]
                      and details["approvalId"] == result.approval_id)
        notes.append(f"{snapshot.snapshot_id} #1..#{snapshot.through_sequence} ({gap} without #1)")
    world.check("signed_root_group_snapshots_cover_complete_histories", all(covered) and len(covered) == 2,
                " ".join(notes))
    world.check("snapshot_policy_logs_prove_exact_signed_human_approvals", all(proven) and len(proven) == 2,
                " ".join(f"{r.group_id}:{_last(world.logs[r.group_id], 'mission.approved')['eventId']}"  # type: ignore[index]
                         for r in results))
    return signed


def _provenance(world: _World) -> Tuple[int, List[str]]:
    """Artifact provenance from the Group logs: every ``sourceArtifactHashes`` entry of a
    published manifest (signed by its producer, verified by the server at ``artifact.publish``)
    must name an Artifact published earlier in the same Group. The edges and the unresolved."""
    edges = 0
    unresolved: List[str] = []
    for group, log in sorted(world.logs.items()):
        seen: Set[str] = set()
        for event in log:
            manifest = event.get("payload", {}).get("artifact")
            if event["kind"] != "artifact.published" or not isinstance(manifest, dict):
                continue
            for source in manifest.get("sourceArtifactHashes", []):
                edges += 1
                if source not in seen:
                    unresolved.append(f"{event['eventId']}:{source}")
            seen.add(manifest["contentHash"])
    return edges, unresolved


async def _archive(world: _World, snapshots: Dict[str, Any], coordinator_auth: _Agent) -> None:
    """§7.4, §15.2: the archival service (the Group Authority, a policy service of the server)
    sends ``…core.group_archive`` with each signed snapshot through the control plane; the Core
    archives the Group (``group.snapshot.created``, ``group.archived``) and refuses every later
    Command of it."""
    outcomes: List[bool] = []
    notes: List[str] = []
    for group, snapshot in sorted(snapshots.items()):
        document = world.document("ext.missionweaveprotocol.core.group_archive", AUTHORITY,
                                  {"snapshot": snapshot.to_wire()}, group)
        try:
            events = world.server.control(world.sign(AUTHORITY, document))
        except CommandRefused as error:
            outcomes.append(False)
            notes.append(f"{group}: {error.code}")
            continue
        archived = [e for e in events if e["kind"] == "group.archived"]
        outcomes.append([e["kind"] for e in events] == ["group.snapshot.created", "group.archived"]
                        and archived[0]["payload"].get("archiveSnapshotId") == snapshot.snapshot_id
                        and archived[0]["payload"].get("throughSequence") == snapshot.through_sequence)
        notes.append(" ".join(f"{e['kind']}:{e['eventId']}:{_event_hash(e)}" for e in events))
    after = await world.refused(coordinator_auth, world.agent_command(coordinator_auth, "message.post", {
        "conversationId": f"{MISSION_AUTH}:conversation:main",
        "messageId": "urn:missionweaveprotocol:message:poc-after-archive",
        "content": [{"type": "text", "text": "one more thing"}]}, GROUP_AUTH))
    world.check("authoritative_core_archived_groups_with_signed_snapshots",
                len(outcomes) == 2 and all(outcomes) and after == "INVALID_STATE_TRANSITION",
                " ".join(notes) + f"; a later Command: {after}")


async def _approvals(world: _World, coordinator_auth: _Agent, coordinator_cli: _Agent, coder: _Agent,
                     hashes: Dict[str, List[str]]) -> List[MissionResult]:
    """Coordinator verification, submission, one human change request on the auth Mission, the
    correction, and the two exact signed human approvals."""
    server = world.server
    counts = []
    for agent, group in ((coordinator_auth, GROUP_AUTH), (coordinator_cli, GROUP_CLI)):
        log = await _replay(world, agent, group)
        authorized = {e["payload"]["workItemId"] for e in log if e["kind"] == "work.authorized"}
        verified = {e["payload"]["workItemId"] for e in log if e["kind"] == "work.result.accepted"}
        counts.append((bool(authorized) and authorized == verified, len(verified), len(authorized)))
    world.check("coordinator_verification_precedes_approval", all(ok for ok, _, _ in counts),
                " ".join(f"{v}/{a}" for _, v, a in counts) + " WorkItems verified before submission")
    server.advance(1)
    await world.do(coordinator_auth, "mission.submit_for_approval",
                   {"artifactHashes": [hashes[GROUP_AUTH][-1]]}, GROUP_AUTH, coordinator=True)
    await _replay(world, coordinator_auth, GROUP_AUTH)
    changes = world.human("request_changes", {"feedback": "Add rate limiting to the login endpoint"}, GROUP_AUTH)
    world.check("human_control_signed_change_request",
                changes["kind"] == "mission.changes_requested" and changes["actor"]["id"] == OWNER_ID,
                f"{changes['eventId']}:{_event_hash(changes)}")
    # The correction, proposed by the coder (§10.1: a Work Proposal is not work: no WorkItem
    # exists, an offer of it is refused as a transition from no state), then authorized by the
    # Coordinator from the proposal.
    item = _work(MISSION_AUTH, "correction")
    proposal_id = "urn:missionweaveprotocol:proposal:auth-correction"
    conversation = f"{MISSION_AUTH}:conversation:main"
    await world.do(coder, "message.post", {
        "conversationId": conversation, "messageId": "urn:missionweaveprotocol:message:poc-proposal",
        "content": [{"type": "text", "text": "I propose a rate-limiting WorkItem."}],
        "mentions": [{"type": "agent", "id": COORDINATOR_AUTH}]}, GROUP_AUTH)
    proposed = await world.do(coder, "work.propose", {
        "proposalId": proposal_id, "contract": _contract("correction")}, GROUP_AUTH)
    offered = await world.refused(coordinator_auth, world.agent_command(coordinator_auth, "work.offer", {
        "candidates": [{"agentCardVersion": 1, "agentId": CODER,
                        "offerId": "urn:missionweaveprotocol:offer:auth-correction-early"}],
        "selectionBasis": {"authorizationEligible": True, "availabilityEstimate": "2026-07-15T09:00:00Z",
                           "expectedCost": 1.5, "policyRulesApplied": ["capability-match"],
                           "reliabilityEvidence": [], "requiredCapabilities": [CAPABILITY],
                           "verifiedMatches": [CAPABILITY]},
        "workItemId": item}, GROUP_AUTH, coordinator=True))
    world.check("worker_proposal_is_non_authoritative",
                proposed["kind"] == "work.proposed" and proposed["actor"]["id"] == CODER
                and "workItemId" not in proposed["payload"] and offered == "INVALID_STATE_TRANSITION",
                f"{proposed['eventId']}:{_event_hash(proposed)}; offer of {item.rsplit(':', 1)[-1]}: {offered}")
    from_proposal = await world.do(coordinator_auth, "work.authorize", {
        "proposalId": proposal_id, "conversationId": conversation, "workItemId": item},
        GROUP_AUTH, coordinator=True)
    world.check("coordinator_explicitly_authorized_worker_subwork",
                from_proposal["kind"] == "work.authorized" and from_proposal["actor"]["id"] == COORDINATOR_AUTH
                and from_proposal["payload"].get("proposalId") == proposal_id
                and from_proposal["payload"].get("workItemId") == item,
                f"{from_proposal['eventId']}:{_event_hash(from_proposal)} from {proposal_id}")
    fixed = await _complete(world, coordinator_auth, coder, MISSION_AUTH, GROUP_AUTH, item, [hashes[GROUP_AUTH][-1]])
    hashes[GROUP_AUTH].append(fixed)
    server.advance(1)
    await world.do(coordinator_auth, "mission.submit_for_approval",
                   {"artifactHashes": [fixed]}, GROUP_AUTH, coordinator=True)
    await world.do(coordinator_cli, "mission.submit_for_approval",
                   {"artifactHashes": [hashes[GROUP_CLI][-1]]}, GROUP_CLI, coordinator=True)
    results: List[MissionResult] = []
    approvals: List[bool] = []
    for agent, mission, group in ((coordinator_auth, MISSION_AUTH, GROUP_AUTH), (coordinator_cli, MISSION_CLI, GROUP_CLI)):
        await _replay(world, agent, group)
        submitted = _last(world.logs[group], "mission.submitted_for_approval")
        approved = world.human("approve", {"approvalId": f"{mission}:approval:final"}, group)
        log = await _replay(world, agent, group)
        assert submitted is not None
        approvals.append(
            approved["kind"] == "mission.approved"
            and approved["payload"].get("artifactHashes", submitted["payload"]["artifactHashes"])
            == submitted["payload"]["artifactHashes"])
        results.append(MissionResult(
            mission, group, str(approved["payload"].get("state", "")), int(approved["aggregateRevision"]),
            f"{mission}:approval:final", tuple(hashes[group]), len(log)))
    changes_cycles = [e for e in world.logs[GROUP_AUTH] if e["kind"] == "mission.changes_requested"]
    world.check("one_human_requested_changes_cycle", len(changes_cycles) == 1,
                ",".join(e["eventId"] for e in changes_cycles))
    world.check("exact_signed_human_approvals", all(approvals),
                " ".join(f"{r.group_id}@{r.revision}" for r in results))
    edges, unresolved = _provenance(world)
    world.provenance_edges = edges
    world.check("artifact_provenance_verified", edges >= 10 and not unresolved,
                f"{edges} source edges, each an earlier Artifact published in the Group; unresolved {unresolved}")
    world.check("both_root_missions_approved", all(r.status == "approved" for r in results),
                " ".join(f"{r.mission_id}:{r.status}" for r in results))
    snapshots = _snapshots(world, results)
    # The last step, after every report figure is read: the Groups leave the online log.
    await _archive(world, snapshots, coordinator_auth)
    return results


async def _run(root: Path, database_url: Optional[str]) -> POCReport:
    url = database_url or f"sqlite:///{root / 'authority.sqlite3'}"
    # The reviewer's Worker process and the interpreter that replaces it after the kill start
    # with the demo (their start-ups overlap the server's) and wait for their requests.
    workers = [_WorkerProcess("worker-1"), _WorkerProcess("worker-2")]
    try:
        server = _Server(root, url)
    except BaseException:
        for worker in workers:
            worker.stop()
        raise
    world = _World(server, root)
    world.workers.extend(workers)
    try:
        missions, edges = await _scenario(world)
    finally:
        for agent in world.agents.values():
            await agent.client.close()
        for process in world.workers:
            process.stop()
        server.stop()
    passed = all(ok for _, ok in world.checks)
    return POCReport(
        passed=passed,
        checks=tuple(world.checks),
        missions=tuple(missions),
        event_counts=tuple((g, len(log)) for g, log in sorted(world.logs.items())),
        final_cursors=tuple((g, log[-1]["sequence"] if log else 0) for g, log in sorted(world.logs.items())),
        failure_injections=FAILURE_INJECTIONS,
        artifact_provenance_edges=edges,
        log_hashes=tuple(
            (g, "sha256:" + hashlib.sha256(b"".join(canonical_bytes(e) for e in log)).hexdigest())
            for g, log in sorted(world.logs.items())),
        evidence=tuple(world.evidence),
        scheduler_dispatch_order=tuple(world.dispatch_order),
    )


async def run_poc(workdir: Optional[Path] = None, *, database_url: Optional[str] = None) -> POCReport:
    """Runs the proof of concept; the report (``passed`` false names failed checks)."""
    if workdir is not None:
        root = Path(workdir)
        root.mkdir(parents=True, exist_ok=True)
        return await _run(root, database_url)
    with tempfile.TemporaryDirectory(prefix="mwp-poc-") as directory:
        return await _run(Path(directory), database_url)


def run_poc_sync(workdir: Optional[Path] = None, *, database_url: Optional[str] = None) -> POCReport:
    return asyncio.run(run_poc(workdir, database_url=database_url))
