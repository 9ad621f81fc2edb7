"""Issue 24 item 2: ``missionweaveprotocol.cli`` and the three console scripts as real processes
(``reference-python.md`` §1.29, §2.3). ``missionweaveprotocol-server`` is the Rust server run
in-process; these tests mirror ``core/server/tests/process.rs`` (flags, environment variables,
exit codes, TLS required unless ``--allow-insecure``, Agent Cards refused unless signed by the
trust key, ``--dev`` answering ``/healthz``, SIGTERM/SIGINT closing connections with 1001 and
exiting 0) against the script, plus the module's importable pieces."""

from __future__ import annotations

import http.client
import json
import signal
import ssl
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from cli_support import (
    AUTHORITY,
    COORDINATOR,
    KEYS,
    OTHER_SERVICE,
    REGISTRAR,
    WORKER,
    Org,
    ServerProcess,
    b64,
    card,
    run_to_exit,
    script,
    unsigned_card,
    without,
)

from missionweaveprotocol import _native, cli


@pytest.fixture
def org(tmp_path: Path) -> Org:
    return Org(tmp_path)


def _tls_context(cafile: Path) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(cafile))
    context.minimum_version = ssl.TLSVersion.TLSv1_2  # the server must pick 1.3 itself
    return context


def _healthz(server: ServerProcess, context: ssl.SSLContext | None) -> tuple[int, str]:
    if context is None:
        connection: http.client.HTTPConnection = http.client.HTTPConnection(
            "127.0.0.1", server.port, timeout=60)
    else:
        connection = http.client.HTTPSConnection("127.0.0.1", server.port, timeout=60,
                                                 context=context)
    connection.connect()
    version = ""
    if context is not None:
        sock = connection.sock
        assert isinstance(sock, ssl.SSLSocket)
        version = str(sock.version())
    connection.request("GET", "/healthz")
    response = connection.getresponse()
    body = response.read().decode()
    connection.close()
    return response.status, version or body


# -- flags, environment variables, exit codes ---------------------------------------------


def test_help_and_version_are_the_rust_servers() -> None:
    code, out, _ = run_to_exit(["--help"])
    assert code == 0
    for flag in ["--registry", "--agent-registry-snapshot", "--database-url", "--host", "--port",
                 "--authority-key-id", "--organization-public-key", "--tls-certfile",
                 "--tls-keyfile", "--allow-insecure", "--dev",
                 "MISSIONWEAVEPROTOCOL_AGENT_REGISTRY", "MISSIONWEAVEPROTOCOL_DATABASE_URL",
                 "sqlite+aiosqlite:///./missionweaveprotocol.db", "8765",
                 "urn:missionweaveprotocol:key:group-gateway"]:
        assert flag in out, flag
    # The secrets are hidden flags.
    assert "--session-secret" not in out and "--authority-private-key" not in out
    code, out, _ = run_to_exit(["--version"])
    assert code == 0 and out.startswith("missionweaveprotocol-server "), out


def test_flag_problems_exit_2_with_the_rust_message(org: Org) -> None:
    base = org.base_args()
    tls = base + ["--tls-certfile", "/nonexistent.pem", "--tls-keyfile", "/nonexistent.key"]
    cases: list[tuple[list[str], str]] = [
        (without(base, "--registry"), "--registry"),
        (without(base, "--agent-registry-snapshot"), "--agent-registry-snapshot"),
        (without(base, "--registry") + ["--registry", "/nonexistent/cards.json"], "does not exist"),
        # TLS required unless --allow-insecure (or --dev).
        (base, "requires TLS"),
        (without(tls, "--tls-keyfile"), "--tls-keyfile"),
        (base + ["--dev", "--tls-certfile", "/x.pem", "--tls-keyfile", "/x.key"], "--dev"),
        (base + ["--allow-insecure", "--session-secret", "short"], "32"),
        (without(base, "--authority-private-key") + ["--tls-certfile", "/a", "--tls-keyfile", "/b"],
         "--authority-private-key"),
        (without(base, "--organization-public-key")
         + ["--tls-certfile", "/a", "--tls-keyfile", "/b"], "--organization-public-key"),
        (without(base, "--authority-private-key")
         + ["--allow-insecure", "--authority-private-key", "not-a-key"], "--authority-private-key"),
        (without(base, "--organization-public-key")
         + ["--allow-insecure", "--organization-public-key", "AAAA"], "--organization-public-key"),
        (without(base, "--host") + ["--allow-insecure", "--host", "0.0.0.0"], "loopback"),
        (without(base, "--host") + ["--dev", "--host", "0.0.0.0"], "loopback"),
        (without(base, "--port") + ["--allow-insecure", "--port", "70000"], "--port"),
        (base + ["--allow-insecure", "--no-such-flag"], "--no-such-flag"),
        (without(base, "--database-url") + ["--allow-insecure", "--database-url", "mysql://x/y"],
         "--database-url"),
    ]
    for args, needle in cases:
        code, out, err = run_to_exit(args)
        assert code == 2, (args, err)
        assert needle in err, (needle, err)
        assert "listening" not in out
    # The message is the binary's (the reference's TLS text, with --dev added).
    _, _, err = run_to_exit(base)
    assert "MissionWeaveProtocol requires TLS; supply --tls-certfile and --tls-keyfile" in err
    assert "--allow-insecure for local development" in err


def test_environment_variables_stand_for_flags(org: Org) -> None:
    cert = org.path("env-cert.pem")
    env = {
        "MISSIONWEAVEPROTOCOL_AGENT_REGISTRY": str(org.cards_path),
        "MISSIONWEAVEPROTOCOL_AGENT_REGISTRY_SNAPSHOT": str(org.registry_path),
        "MISSIONWEAVEPROTOCOL_DATABASE_URL": org.database(),
        "MISSIONWEAVEPROTOCOL_HOST": "127.0.0.1",
        "MISSIONWEAVEPROTOCOL_PORT": "0",
        "MISSIONWEAVEPROTOCOL_SESSION_SECRET": "a-session-secret-of-at-least-32-bytes!",
        "MISSIONWEAVEPROTOCOL_AUTHORITY_KEY_ID": KEYS[AUTHORITY].key_id,
        "MISSIONWEAVEPROTOCOL_AUTHORITY_PRIVATE_KEY": org.authority_seed,
        "MISSIONWEAVEPROTOCOL_ORGANIZATION_PUBLIC_KEY": org.organization_key,
        "MISSIONWEAVEPROTOCOL_DEV_CERT": str(cert),
    }
    server = ServerProcess(["--dev"], env).ready()
    try:
        assert server.url.startswith("wss://127.0.0.1:"), server.url
        assert cert.is_file()
        assert any("SHA-256 fingerprint" in line for line in server.stdout)
        # Cards registered at start (the Rust server's log line, on the process's stderr).
        assert "registered=2" in server.stderr or _eventually(lambda: "registered=2" in server.stderr)
        assert org.authority_seed not in server.stderr, "the authority key was logged"
        assert "a-session-secret" not in server.stderr, "the session secret was logged"
        # A short secret through the environment is refused like the flag.
        code, _, err = run_to_exit(["--dev"], dict(env, MISSIONWEAVEPROTOCOL_SESSION_SECRET="short"))
        assert code == 2, err
        # Without TLS flags and without --dev/--allow-insecure: TLS is required.
        code, _, err = run_to_exit([], env)
        assert code == 2 and "requires TLS" in err, err
        server.signal(signal.SIGTERM)
        assert server.wait() == 0, server.stderr
    finally:
        server.stop()


def _eventually(check: Any) -> bool:
    """Log lines may trail the "listening on" line a little (another pipe)."""
    for _ in range(600):
        if check():
            return True
        time.sleep(0.1)
    return False


def test_start_up_failures_exit_1(org: Org) -> None:
    dev = org.dev_args()
    bad = org.write("bad-registry.json", {"not": "a registry"})
    code, _, err = run_to_exit(without(dev, "--agent-registry-snapshot")
                               + ["--agent-registry-snapshot", str(bad)])
    assert code == 1 and "Registry" in err, err
    code, _, err = run_to_exit(without(dev, "--authority-key-id")
                               + ["--authority-key-id", "urn:missionweaveprotocol:key:none"])
    assert code == 1 and "not in the Registry" in err, err
    # A key ID the Registry binds, with another key: the Core refuses it.
    code, _, err = run_to_exit(without(dev, "--authority-private-key")
                               + ["--authority-private-key", b64(bytes([7] * 32))])
    assert code == 1 and "bound" in err, err


def test_agent_cards_must_be_signed_by_the_organization_key(org: Org) -> None:
    dev = org.dev_args()

    def start_with(cards: Any, name: str, args: list[str] | None = None) -> tuple[int, str]:
        path = org.write(name, cards)
        code, _, err = run_to_exit(without(args or dev, "--registry") + ["--registry", str(path)])
        return code, err

    code, err = start_with([unsigned_card(WORKER, 1)], "unsigned.json")
    assert code == 1 and "not signed" in err, err
    tampered = dict(card(WORKER, 1, REGISTRAR), displayName="someone else")
    code, err = start_with([tampered], "tampered.json")
    assert code == 1 and "refused" in err and "AUTH_INVALID_SIGNATURE" in err, err
    foreign = card(WORKER, 1, OTHER_SERVICE)
    code, err = start_with([foreign], "foreign.json")
    assert code == 1 and "--organization-public-key" in err, err
    code, err = start_with([card(WORKER, 1, COORDINATOR)], "by-agent.json")
    assert code == 1, err
    good = card(WORKER, 1, REGISTRAR)
    code, err = start_with([good, good], "dup.json")
    assert code == 1 and "two cards" in err, err
    code, err = start_with([], "empty.json")
    assert code == 1 and "no card" in err, err
    code, err = start_with("cards", "string.json")
    assert code == 1, err
    # {"agentCards": [...]}, and the foreign-signed card without a trust key: it starts.
    path = org.write("wrapped.json", {"agentCards": [foreign]})
    args = without(without(dev, "--registry"), "--organization-public-key") + ["--registry", str(path)]
    server = ServerProcess(args).ready()
    try:
        server.signal(signal.SIGTERM)
        assert server.wait() == 0, server.stderr
    finally:
        server.stop()


# -- serving -------------------------------------------------------------------------------


def test_allow_insecure_serves_plain_ws_on_loopback_with_a_warning(org: Org) -> None:
    server = ServerProcess(org.base_args() + ["--allow-insecure"]).ready()
    try:
        assert server.url.startswith("ws://127.0.0.1:"), server.url
        assert _eventually(lambda: "WARNING" in server.stderr), server.stderr
        status, body = _healthz(server, None)
        assert status == 200, body
        server.signal(signal.SIGINT)
        assert server.wait() == 0, server.stderr
    finally:
        server.stop()


def _authenticate(ws: Any, agent: str) -> None:
    """Authenticates ``agent`` on the WebSocket ``ws`` (``websockets``' sync client) with the
    Rust client session."""
    session = _native.NativeClientSession(agent, _registry(), AUTHORITY, KEYS[agent])
    now = int(time.time() * 1000)
    session.start(now)
    events: list[Any] = []
    while not any(e[0] in ("authenticated", "handshake_failed") for e in events):
        for out in session.poll_output():
            ws.send(out.decode())
        session.on_text(ws.recv(timeout=60), int(time.time() * 1000))
        events += session.poll_events()
    assert [e for e in events if e[0] == "authenticated"], events


def _registry() -> bytes:
    from cli_support import registry_bytes

    return registry_bytes()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_dev_serves_tls13_and_a_signal_closes_connections_with_1001_and_exits_0(
    org: Org, signum: int
) -> None:
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    server = ServerProcess(org.dev_args()).ready()
    try:
        assert server.url.startswith("wss://127.0.0.1:"), server.url
        cafile = org.path("dev-cert.pem")
        status, version = _healthz(server, _tls_context(cafile))
        assert (status, version) == (200, "TLSv1.3")
        with connect(server.url, ssl=_tls_context(cafile), open_timeout=60) as ws:
            _authenticate(ws, WORKER)
            server.signal(signum)
            deadline = time.monotonic() + 60
            with pytest.raises(ConnectionClosed) as closed:
                while time.monotonic() < deadline:  # frames may come before the close
                    ws.recv(timeout=60)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1001
        assert server.wait() == 0, server.stderr
        assert "Traceback" not in server.stderr, server.stderr
        # The process exited (above), so its listener is gone; connecting to the port again
        # would test the machine's port reuse (another test's server may hold it by now).
    finally:
        server.stop()


def test_one_server_per_sqlite_file(org: Org) -> None:
    first = ServerProcess(org.dev_args()).ready()
    try:
        args = without(org.dev_args(), "--dev-cert") + ["--dev-cert", str(org.path("second.pem"))]
        code, _, err = run_to_exit(args)
        assert code == 1 and "another server process" in err, err
    finally:
        first.signal(signal.SIGTERM)
        assert first.wait() == 0
        first.stop()


# -- the other two scripts -------------------------------------------------------------------


def test_demo_refuses_an_unknown_flag_with_exit_2(tmp_path: Path) -> None:
    # The demo itself runs in test_poc.py.
    done = subprocess.run([script("missionweaveprotocol-demo"), "--no-such-option"], check=False,
                          capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert done.returncode == 2
    assert done.stdout == ""
    assert "--no-such-option" in done.stderr


def test_conformance_script_is_the_rust_command(tmp_path: Path) -> None:
    done = subprocess.run([script("missionweaveprotocol-conformance")], check=False, capture_output=True,
                          text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "passed" in done.stdout
    done = subprocess.run([script("missionweaveprotocol-conformance"), "--no-such-option"],
                          check=False, capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert done.returncode == 2


# -- the module's importable pieces ----------------------------------------------------------


def test_module_names_and_kinds() -> None:
    for name in ("server", "demo", "conformance", "server_app", "demo_app", "conformance_app",
                 "load_agent_cards", "create_gateway_app", "tls13_context_factory"):
        assert callable(getattr(cli, name)), name
    assert getattr(cli.POCReport, "_is_protocol", False)
    assert set(cli.__all__) >= {"POCReport", "POCRunner", "tls13_context_factory",
                                "load_agent_cards", "create_gateway_app"}


def test_server_in_process_returns_the_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.server(["--registry", "/nonexistent", "--agent-registry-snapshot", "/x"]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert cli.server(["--version"]) == 0
    assert capsys.readouterr().out.startswith("missionweaveprotocol-server ")
    assert cli.demo(["--no-such-option"]) == 2


def test_tls13_context_factory_pins_tls_1_3() -> None:
    made: list[ssl.SSLContext] = []

    def default() -> ssl.SSLContext:
        made.append(ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER))
        return made[-1]

    context = cli.tls13_context_factory(object(), default)
    assert context is made[0]
    assert context.minimum_version == context.maximum_version == ssl.TLSVersion.TLSv1_3


def test_load_agent_cards_checks_as_the_server_does(org: Org) -> None:
    cards = cli.load_agent_cards(org.cards_path, registry=org.registry,
                                 organization_public_key=org.organization_key)
    assert [c["agentId"] for c in cards] == [COORDINATOR, WORKER]
    assert all("signature" in c for c in cards)
    wrapped = org.write("wrapped.json", {"agentCards": [card(WORKER, 1, OTHER_SERVICE)]})
    assert len(cli.load_agent_cards(wrapped, registry=org.registry)) == 1
    refusals: dict[str, Any] = {
        "not signed": [unsigned_card(WORKER, 1)],
        "AUTH_INVALID_SIGNATURE": [dict(card(WORKER, 1, REGISTRAR), displayName="x")],
        "--organization-public-key": [card(WORKER, 1, OTHER_SERVICE)],
        "two cards": [card(WORKER, 1, REGISTRAR)] * 2,
        "no card": [],
    }
    for needle, content in refusals.items():
        path = org.write("refused.json", content)
        with pytest.raises(ValueError, match=needle):
            cli.load_agent_cards(path, registry=org.registry,
                                 organization_public_key=org.organization_key)
    with pytest.raises(ValueError, match="cannot read"):
        cli.load_agent_cards(org.path("absent.json"), registry=org.registry)
    with pytest.raises(ValueError, match="organization_public_key"):
        cli.load_agent_cards(org.cards_path, registry=org.registry, organization_public_key="AAAA")


def test_create_gateway_app_bootstraps_the_cards_and_serves_ws(org: Org) -> None:
    from fastapi.testclient import TestClient

    cards = cli.load_agent_cards(org.cards_path, registry=org.registry)
    url = org.database("app.db")

    def app(with_cards: Any = cards) -> Any:
        return cli.create_gateway_app(
            database_url=url, agent_cards=with_cards, command_key_resolver=org.registry,
            session_secret="s" * 32, authority_key_id=KEYS[AUTHORITY].key_id,
            authority_private_key=org.authority_seed)

    with TestClient(app()) as client, client.websocket_connect("/ws") as ws:
        session = _native.NativeClientSession(WORKER, org.registry, AUTHORITY, KEYS[WORKER])
        now = int(time.time() * 1000)
        session.start(now)
        events: list[Any] = []
        while not any(e[0] in ("authenticated", "handshake_failed") for e in events):
            for out in session.poll_output():
                ws.send_text(out.decode())
            session.on_text(ws.receive_text().encode(), now)
            events += session.poll_events()
        assert [e for e in events if e[0] == "authenticated"], events
    # The same cards again: unchanged, the app starts.
    with TestClient(app()):
        pass
    # A newer card replaces; an older one than registered is refused at start.
    with TestClient(app([card(WORKER, 2, REGISTRAR)])):
        pass
    with pytest.raises(RuntimeError, match="card_version_not_newer"), TestClient(app()):
        pass
    # Cards that fail the server's checks, and unusable arguments.
    with pytest.raises(ValueError, match="not signed"), \
            TestClient(app([unsigned_card(COORDINATOR, 3)])):
        pass
    with pytest.raises(ValueError, match="32"):
        cli.create_gateway_app(database_url=url, agent_cards=cards,
                               command_key_resolver=org.registry, session_secret="short")
    with pytest.raises(ValueError, match="not in the Registry"):
        cli.create_gateway_app(database_url=url, agent_cards=cards,
                               command_key_resolver=org.registry,
                               authority_key_id="urn:missionweaveprotocol:key:none")
    assert json.dumps(cards[0])  # plain JSON values
