"""The proof of concept (``missionweaveprotocol.poc``, ``missionweaveprotocol-demo``) against a
real ``missionweaveprotocol-server`` process: every check true on SQLite, two runs
byte-identical, the same report on PostgreSQL, and checks that go false when the protection
they prove is taken away. Nothing asserts on timing (``python/benchmarks/bench_poc.py`` prints
wall times)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cli_support import script
from missionweaveprotocol import poc
from pg_support import Database, database  # noqa: F401  (the fixture)


def test_every_check_passes_on_sqlite(tmp_path: Path) -> None:
    report = poc.run_poc_sync(tmp_path)
    report.require_success()
    names = [name for name, _ in report.checks]
    assert names == list(poc.CHECK_NAMES)
    assert all(ok for _, ok in report.checks)
    # The report names no port and no path.
    text = report.to_json()
    assert str(tmp_path) not in text and "127.0.0.1" not in text


def test_two_runs_print_byte_identical_reports(tmp_path: Path) -> None:
    outputs = []
    for run in ("a", "b"):
        done = subprocess.run([script("missionweaveprotocol-demo"), "--workdir", str(tmp_path / run)],
                              check=False, capture_output=True, timeout=300)
        assert done.returncode == 0, done.stderr.decode()
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1]
    assert json.loads(outputs[0])["passed"] is True


def test_the_same_report_on_postgresql(tmp_path: Path, database: Database) -> None:  # noqa: F811
    on_sqlite = poc.run_poc_sync(tmp_path / "sqlite")
    on_postgres = poc.run_poc_sync(tmp_path / "pg", database_url=database.url())
    on_postgres.require_success()
    assert on_postgres.to_json() == on_sqlite.to_json()


def test_a_failed_check_is_named_and_the_report_fails() -> None:
    report = poc.POCReport(
        passed=False, checks=(("duplicate_command_idempotent", True), ("action_id_collision_rejected", False)),
        missions=(), event_counts=(), final_cursors=(), failure_injections=(),
        artifact_provenance_edges=0, log_hashes=(),
    )
    assert report.failed_checks == ("action_id_collision_rejected",)
    with pytest.raises(AssertionError, match="action_id_collision_rejected"):
        report.require_success()


def _mutated_worker(monkeypatch: pytest.MonkeyPatch, mutation: str) -> None:
    """The reviewer's Worker processes run with ``mutation`` (Python source, run in the process
    after ``poc`` and ``_poc_worker`` are imported) applied: the protection is taken away in
    the process that holds it, not in the demo."""
    source = "\n".join([
        "import sys",
        "from missionweaveprotocol import poc, _poc_worker",
        mutation,
        "sys.exit(_poc_worker.main())",
    ])
    monkeypatch.setattr(poc, "_worker_command", lambda: [sys.executable, "-c", source])


def test_without_the_session_fence_the_restart_check_goes_false(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Mutation, in the restarted Worker process: the "old session" Command is signed with the
    # NEW epoch (as if the server did not fence by epoch, the Command is accepted): the check
    # must go false.
    _mutated_worker(monkeypatch, """
original = poc._World.agent_command
def unfenced(self, agent, kind, payload, group, **options):
    if payload.get("messageId") == "urn:missionweaveprotocol:message:poc-stale":
        options.pop("session_epoch", None)
    return original(self, agent, kind, payload, group, **options)
poc._World.agent_command = unfenced
""")
    report = poc.run_poc_sync(tmp_path)
    assert report.failed_checks == ("worker_restart_fences_old_session",)


def test_a_worker_process_that_is_not_killed_fails_the_fence_check(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Mutation: the first Worker process is asked to stop (it closes its session and store
    # cleanly) instead of being killed: not the failure the check claims, so it goes false.
    def stopped_cleanly(self: poc._WorkerProcess) -> int:
        self.stop()
        return self.process.returncode

    monkeypatch.setattr(poc._WorkerProcess, "kill", stopped_cleanly)
    report = poc.run_poc_sync(tmp_path)
    assert report.failed_checks == ("worker_restart_fences_old_session",)


def test_a_restarted_worker_on_a_fresh_store_fails_the_cursor_check(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Mutation, in the Worker processes: each opens a store file of its own (the restarted one
    # does not find the killed one's durable Cursor): it resubscribes from #1, the check goes
    # false.
    _mutated_worker(monkeypatch, """
import os
real = _poc_worker.SQLiteAgentStore
_poc_worker.SQLiteAgentStore = lambda path: real(f"{path}.{os.getpid()}")
""")
    report = poc.run_poc_sync(tmp_path)
    assert report.failed_checks == ("sqlite_cursors_reached_contiguous_group_heads",)


def test_without_the_action_id_fixed_the_collision_check_goes_false(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Mutation: the changed Command gets a fresh Action ID: nothing collides, the check fails.
    original = poc._World.agent_command

    def fresh(self: poc._World, agent: poc._Agent, kind: str, payload: dict, group: str,  # type: ignore[type-arg]
              **options: object) -> bytes:
        if kind == "ext.missionweaveprotocol.core.work_dependency_add" and payload.get("dependencyId", "").endswith("implementation"):
            options.pop("action_id", None)
        return original(self, agent, kind, payload, group, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(poc._World, "agent_command", fresh)
    report = poc.run_poc_sync(tmp_path)
    assert "action_id_collision_rejected" in report.failed_checks


# -- the two server features the demo needs: the control-plane relay and the manual clock ----


def _human_create(world: poc._World, key_of: str = poc.OWNER_ID) -> bytes:
    request = {"operation": "create", "humanId": poc.OWNER_ID, "actionId": world.actions.next(),
               "issuedAt": poc._stamp(world.server.now),
               "args": poc._create_args(poc.MISSION_AUTH, poc.GROUP_AUTH, poc.COORDINATOR_AUTH, "x")}
    from missionweaveprotocol import _native
    from missionweaveprotocol.signed_documents import SignedDocumentCodec, SignedDocumentKind

    unsigned = _native.control_command(request)
    return SignedDocumentCodec().sign(SignedDocumentKind.COMMAND, unsigned, poc.KEYS[key_of]).canonical_document_bytes


def test_the_relay_takes_human_commands_only_and_verifies_them(tmp_path: Path) -> None:
    from missionweaveprotocol.client import CommandRefused

    server = poc._Server(tmp_path, f"sqlite:///{tmp_path / 'a.sqlite3'}")
    try:
        world = poc._World(server, tmp_path)
        # An Agent's Command is refused: Agents are fenced by their own WebSocket session.
        agent_command = world.sign(poc.CODER, world.document(
            "message.post", poc.CODER, {"conversationId": "urn:missionweaveprotocol:conversation:x",
                                        "messageId": "urn:missionweaveprotocol:message:x",
                                        "content": [{"type": "text", "text": "hi"}]},
            poc.GROUP_AUTH, sessionEpoch=1, membershipEpoch=1))
        with pytest.raises(CommandRefused) as refused:
            server.control(agent_command)
        assert refused.value.code == "AUTH_FORBIDDEN"
        # The human's Command signed with another principal's key does not verify.
        with pytest.raises(CommandRefused) as forged:
            server.control(_human_create(world, key_of=poc.CODER))
        assert forged.value.code == "AUTH_INVALID_SIGNATURE"
        # Signed by the human: applied; the same bytes again: the original Event (§15.1).
        command = _human_create(world)
        first = server.control(command)
        assert [e["kind"] for e in first][:1] == ["mission.created"]
        assert server.control(command)[0] == first[0]
        # Issued far before the server's clock: outside the freshness window.
        server.advance(3600)
        with pytest.raises(CommandRefused) as stale:
            server.control(_stale(world))
        assert stale.value.code == "AUTH_INVALID_SIGNATURE"
    finally:
        server.stop()


def _stale(world: poc._World) -> bytes:
    now = world.server.now
    world.server.now = poc.START
    try:
        return _human_create(world)
    finally:
        world.server.now = now


def test_the_manual_clock_is_refused_off_loopback(tmp_path: Path) -> None:
    (tmp_path / "registry.json").write_bytes(poc.registry_bytes())
    (tmp_path / "cards.json").write_text("[]")
    # TLS files and both secrets (their content is read only at start): only --clock objects.
    done = subprocess.run([
        *poc._server_command(), "--registry", str(tmp_path / "cards.json"),
        "--agent-registry-snapshot", str(tmp_path / "registry.json"),
        "--tls-certfile", str(tmp_path / "cards.json"), "--tls-keyfile", str(tmp_path / "cards.json"),
        "--authority-private-key", poc._b64(poc.KEYS[poc.AUTHORITY].seed_bytes()),
        "--organization-public-key", poc._b64(poc.KEYS[poc.REGISTRAR].public_key_bytes),
        "--host", "0.0.0.0", "--port", "0", "--clock", "manual:2026-07-15T08:00:00Z"],
        check=False, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "loopback" in done.stderr and "--clock" in done.stderr
    done = subprocess.run([
        *poc._server_command(), "--registry", str(tmp_path / "cards.json"),
        "--agent-registry-snapshot", str(tmp_path / "registry.json"), "--allow-insecure",
        "--host", "127.0.0.1", "--port", "0", "--clock", "manual:yesterday"],
        check=False, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "--clock" in done.stderr


def test_an_unsafe_checkpoint_does_not_free_the_slot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Mutation: the preempted review reports its checkpoint as not safe; the Scheduler refuses
    # the preemption (§11.3: a slot is taken back only after a durable, safe checkpoint).
    from missionweaveprotocol import _native
    from missionweaveprotocol.scheduler import SchedulerError

    real = _native.CheckpointRef

    def unsafe(checkpoint_id: str, **fields: object) -> object:
        fields["safe"] = False
        return real(checkpoint_id, **fields)  # type: ignore[arg-type]

    monkeypatch.setattr(_native, "CheckpointRef", unsafe)
    with pytest.raises(SchedulerError):
        poc.run_poc_sync(tmp_path)


def test_without_the_action_bound_the_offline_check_goes_false(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Mutation: the offline policy allows 3 actions instead of 2; the third is buffered.
    from missionweaveprotocol import offline

    class Looser(offline.OfflineLimits):
        def __init__(self, grace: object, actions: int, usage: object) -> None:
            super().__init__(grace, actions + 1, usage)  # type: ignore[arg-type]

    monkeypatch.setattr(offline, "OfflineLimits", Looser)
    report = poc.run_poc_sync(tmp_path)
    assert "offline_progress_bounded" in report.failed_checks


def test_a_rebase_that_keeps_the_current_membership_epoch_makes_the_stale_check_go_false(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Mutation: the "stale" rebase is given the current Membership epoch (as if the server
    # did not fence by Membership epoch, it is accepted): the check must go false.
    original = poc.offline_command_to_wire_

    def current(*args: object, membership_epoch: int) -> dict:  # type: ignore[type-arg]
        return original(*args, membership_epoch=2)  # type: ignore[arg-type]

    monkeypatch.setattr(poc, "offline_command_to_wire_", current)
    report = poc.run_poc_sync(tmp_path)
    assert "stale_membership_epoch_rejected_by_gateway" in report.failed_checks


def test_a_runtime_that_leaks_another_groups_credentials_fails_the_isolation_checks(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Mutation: the runtime prepares every dispatch with the auth Group's credentials.
    import dataclasses

    from missionweaveprotocol import agent

    original = agent.AgentRuntimeSession.prepare

    def leaky(self: agent.AgentRuntimeSession, dispatch: object) -> agent.ExecutionContext:
        context = original(self, dispatch)
        return dataclasses.replace(context, credentials=dict(poc._CREDENTIALS[poc.GROUP_AUTH]))

    monkeypatch.setattr(agent.AgentRuntimeSession, "prepare", leaky)
    report = poc.run_poc_sync(tmp_path)
    assert {"per_group_context_isolation", "urgent_group_context_isolated"} <= set(report.failed_checks)


def test_a_projector_blind_to_reissued_leases_does_not_rebuild_the_queues(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Mutation, in the restarted Worker process: its replay ignores the ownership leases
    # accepted and re-issued by its new session: its queued work is not found again, the check
    # goes false, and that work is never done (so it is never verified either).
    _mutated_worker(monkeypatch, '_poc_worker._REQUEUED = ("work.checkpointed", "work.unblocked")')
    report = poc.run_poc_sync(tmp_path)
    assert report.failed_checks == ("worker_restart_rebuilt_per_group_queues_from_event_replay",
                                    "coordinator_verification_precedes_approval")


def test_without_the_archival_policy_service_the_archive_check_goes_false(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Mutation: the server is started without `--policy-service`: the Group Authority's
    # `…core.group_archive` is refused by the Core's authorizer and no Group is archived.
    real = poc.subprocess.Popen

    def without_policy_service(args: list, **kwargs: object) -> object:  # type: ignore[type-arg]
        if "--policy-service" in args:  # the server's command line (not a Worker process's)
            at = args.index("--policy-service")
            args = args[:at] + args[at + 2:]
        return real(args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(poc.subprocess, "Popen", without_policy_service)
    report = poc.run_poc_sync(tmp_path)
    assert report.failed_checks == ("authoritative_core_archived_groups_with_signed_snapshots",)
    assert "AUTH_FORBIDDEN" in dict(report.evidence)["authoritative_core_archived_groups_with_signed_snapshots"]


def test_a_policy_that_buffers_a_submission_makes_the_irreversible_check_go_false(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Mutation: the offline policy takes an irreversible `work.submit` without a word (as if the
    # reversibility rule were gone): the check must go false.
    from missionweaveprotocol import offline

    original = offline.OfflineExecutionPolicy.buffer

    def permissive(self: offline.OfflineExecutionPolicy, document: object, *args: object,
                   **kwargs: object) -> object:
        kind = getattr(document, "get", lambda _k: None)("kind")
        if kind == "work.submit":
            return None
        return original(self, document, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(offline.OfflineExecutionPolicy, "buffer", permissive)
    report = poc.run_poc_sync(tmp_path)
    assert report.failed_checks == ("offline_irreversible_action_rejected",)


def test_a_lease_that_did_not_run_out_makes_the_expiry_check_go_false(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Mutation: the server's clock moves 1 s instead of 3 s past a 2 s Execution Lease, so the
    # renewal is in time and accepted: the expiry check must go false.
    original = poc._Server.advance

    def short(self: poc._Server, seconds: int) -> None:
        original(self, 1 if seconds == 3 else seconds)

    monkeypatch.setattr(poc._Server, "advance", short)
    report = poc.run_poc_sync(tmp_path)
    assert "execution_lease_expiry_rejected" in report.failed_checks


def test_a_stale_ownership_start_made_current_makes_the_stale_ownership_check_go_false(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Mutation: the `work.start` under the lapsed ownership (epoch 1) is sent with the current
    # ownership lease and epoch instead: accepted, the work goes on under it, and only the check
    # that expected the refusal goes false.
    latest: dict = {}  # type: ignore[type-arg]
    offer_and_accept = poc._offer_and_accept

    async def recording(world: poc._World, coordinator: poc._Agent, worker: poc._Agent, group: str,
                        item: str, suffix: str = "") -> dict:  # type: ignore[type-arg]
        latest[item] = await offer_and_accept(world, coordinator, worker, group, item, suffix)
        return latest[item]

    original = poc._World.agent_command

    def current(self: poc._World, agent: poc._Agent, kind: str, payload: dict, group: str,  # type: ignore[type-arg]
                **options: object) -> bytes:
        item = payload.get("workItemId")
        if kind == "work.start" and item == poc._work(poc.MISSION_CLI, "docs") and "leaseSeconds" not in payload \
                and payload["ownershipEpoch"] < latest[item]["ownershipEpoch"]:
            payload = dict(payload, leaseId=latest[item]["ownershipLeaseId"],
                           ownershipEpoch=latest[item]["ownershipEpoch"])
        return original(self, agent, kind, payload, group, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(poc, "_offer_and_accept", recording)
    monkeypatch.setattr(poc._World, "agent_command", current)
    report = poc.run_poc_sync(tmp_path)
    assert report.failed_checks == ("stale_ownership_epoch_rejected",)


def test_the_previous_coordinators_command_made_current_makes_its_refusal_check_go_false(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Mutation: the replaced Coordinator's `work.authorize` is sent as the current Coordinator
    # (its session, its epoch 2): accepted, it is the CLI review's authorization. The refusal
    # check goes false, and with it the check about the refused Command's epoch (no Command was
    # refused; the one sent carried epoch 2).
    def made_current(world: poc._World, previous: poc._Agent, replacement: poc._Agent,
                     payload: dict) -> tuple:  # type: ignore[type-arg]
        return replacement, world.agent_command(replacement, "work.authorize", payload, poc.GROUP_CLI,
                                                coordinator=True, epoch=2)

    monkeypatch.setattr(poc, "_previous_coordinator_command", made_current)
    report = poc.run_poc_sync(tmp_path)
    assert report.failed_checks == ("previous_coordinator_rejected_after_replacement",
                                    "previous_coordinator_command_carried_old_epoch")


def test_the_stale_coordinator_epoch_made_current_makes_the_stale_epoch_check_go_false(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Mutation: the replacement Coordinator's Command with epoch 1 is sent with its current
    # epoch 2: accepted, it is the CLI review's authorization; only the stale-epoch check goes
    # false.
    original = poc._World.agent_command

    def current(self: poc._World, agent: poc._Agent, kind: str, payload: dict, group: str,  # type: ignore[type-arg]
                **options: object) -> bytes:
        if agent.agent_id == poc.COORDINATOR_CLI_V2 and options.get("epoch") == 1:
            options["epoch"] = 2
        return original(self, agent, kind, payload, group, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(poc._World, "agent_command", current)
    report = poc.run_poc_sync(tmp_path)
    assert report.failed_checks == ("stale_coordinator_epoch_rejected",)
