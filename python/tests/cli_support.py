"""What the console-script tests share (the Rust server tests' ``tests/common``, in Python): an
Organization on disk (Registry evidence, Agent Cards signed by the registrar service, keys) and
``missionweaveprotocol-server`` started as a real process. Timeouts are generous (a loaded
2-core machine); nothing asserts on timing."""

from __future__ import annotations

import base64
import json
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from missionweaveprotocol.crypto import SigningKey
from missionweaveprotocol.registry import RegistryBuilder
from missionweaveprotocol.signed_documents import SignedDocumentCodec
from missionweaveprotocol.signed_documents import SignedDocumentKind

ORG = "urn:missionweaveprotocol:organization:acme"
OWNER = "urn:missionweaveprotocol:human:alice"
COORDINATOR = "urn:missionweaveprotocol:agent:planner"
WORKER = "urn:missionweaveprotocol:agent:reviewer"
AUTHORITY = "urn:missionweaveprotocol:service:group-authority"
REGISTRAR = "urn:missionweaveprotocol:service:registrar"
OTHER_SERVICE = "urn:missionweaveprotocol:service:other"
HASH_A = "sha256:" + "a" * 64
HASH_B = "sha256:" + "b" * 64
WAIT = 60.0

_PRINCIPALS = [
    ("human", OWNER, 21),
    ("agent", COORDINATOR, 23),
    ("agent", WORKER, 24),
    ("service", AUTHORITY, 30),
    ("service", REGISTRAR, 40),
    ("service", OTHER_SERVICE, 41),
]
KEYS: dict[str, SigningKey] = {
    pid: SigningKey(f"urn:missionweaveprotocol:key:{seed}", bytes([seed] * 32))
    for _, pid, seed in _PRINCIPALS
}


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def script(name: str) -> str:
    """The installed console script ``name`` (next to this interpreter)."""
    path = Path(sys.executable).parent / name
    assert path.is_file(), f"the console script {name} is not installed next to {sys.executable}"
    return str(path)


def registry_bytes() -> bytes:
    builder = RegistryBuilder(ORG)
    for kind, pid, _ in _PRINCIPALS:
        key = KEYS[pid]
        builder.add_key(key.key_id, (kind, pid), key.public_key_bytes, "2020-01-01T00:00:00Z")
    return builder.build()


def unsigned_card(agent: str, version: int) -> dict[str, Any]:
    key = KEYS[agent]
    return {
        "agentId": agent, "organizationId": ORG, "cardVersion": version,
        "displayName": f"agent {version}", "owner": {"type": "human", "id": OWNER},
        "status": "active", "protocolVersions": ["0.1"],
        "endpoints": [{"transport": "wss", "uri": "wss://agents.acme.example/a"}],
        "publicKeys": [{"keyId": key.key_id, "algorithm": "Ed25519",
                        "publicKey": b64(key.public_key_bytes),
                        "validFrom": "2020-01-01T00:00:00Z"}],
        "capabilities": [{"id": "text.summarise", "version": "1.2.0",
                          "inputSchema": "https://schemas.acme.example/in.json",
                          "inputSchemaHash": HASH_A,
                          "outputSchema": "https://schemas.acme.example/out.json",
                          "outputSchemaHash": HASH_B, "constraints": {},
                          "verifiedEvidence": ["urn:missionweaveprotocol:evidence:summarise-2026"]}],
        "maxConcurrency": 2, "issuedAt": "2026-01-01T00:00:00Z",
    }


def card(agent: str, version: int, signer: str) -> dict[str, Any]:
    signed = SignedDocumentCodec().sign(SignedDocumentKind.AGENT_CARD, unsigned_card(agent, version), KEYS[signer])
    value = json.loads(signed.canonical_document_bytes)
    assert isinstance(value, dict)
    return value


class Org:
    """An Organization written to ``directory``: ``registry.json`` (Registry evidence) and
    ``cards.json`` (the Coordinator's and the Worker's cards, signed by the registrar)."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self.registry = registry_bytes()
        self.registry_path = directory / "registry.json"
        self.registry_path.write_bytes(self.registry)
        self.cards_path = self.write(
            "cards.json", [card(COORDINATOR, 1, REGISTRAR), card(WORKER, 1, REGISTRAR)]
        )

    def path(self, name: str) -> Path:
        return self.dir / name

    def write(self, name: str, value: Any) -> Path:
        path = self.path(name)
        path.write_text(json.dumps(value))
        return path

    @property
    def authority_seed(self) -> str:
        return b64(KEYS[AUTHORITY].seed_bytes())

    @property
    def organization_key(self) -> str:
        """The registrar's public key: the Organization key of ``--organization-public-key``."""
        return b64(KEYS[REGISTRAR].public_key_bytes)

    def database(self, name: str = "authority.db") -> str:
        return f"sqlite:///{self.path(name)}"

    def base_args(self, database_url: str | None = None) -> list[str]:
        return [
            "--registry", str(self.cards_path),
            "--agent-registry-snapshot", str(self.registry_path),
            "--database-url", database_url or self.database(),
            "--authority-key-id", KEYS[AUTHORITY].key_id,
            "--authority-private-key", self.authority_seed,
            "--organization-public-key", self.organization_key,
            "--host", "127.0.0.1",
            "--port", "0",
        ]

    def dev_args(self, database_url: str | None = None) -> list[str]:
        return self.base_args(database_url) + ["--dev", "--dev-cert", str(self.path("dev-cert.pem"))]


def without(args: Sequence[str], name: str) -> list[str]:
    """``args`` without the flag ``name`` and its value."""
    out: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg == name:
            skip = True
        else:
            out.append(arg)
    return out


def _environment(env: Mapping[str, str] | None) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("MISSIONWEAVEPROTOCOL_")}
    base.update(env or {})
    return base


def run_to_exit(
    args: Sequence[str], env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> tuple[int, str, str]:
    """Runs the server script to its exit (start-up failures): ``(code, stdout, stderr)``."""
    done = subprocess.run(
        [script("missionweaveprotocol-server"), *args], check=False, capture_output=True, text=True,
        env=_environment(env), cwd=cwd, timeout=WAIT,
    )
    return done.returncode, done.stdout, done.stderr


def _sigint_ignored() -> bool:
    """Whether this process ignores SIGINT: so do its children (an ignored signal stays
    ignored across ``exec``), and a Python started with SIGINT ignored installs no
    ``KeyboardInterrupt`` handler. A test suite started in the background by a
    non-interactive shell (``cmd &``) runs so."""
    return signal.getsignal(signal.SIGINT) == signal.SIG_IGN


def _sigint_default() -> None:
    """In the child before ``exec``: SIGINT to its default, so the server's Python installs its
    handler (the tests send SIGINT as a terminal's Ctrl-C would)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class ServerProcess:
    """The server script as a process; :meth:`ready` waits for its "listening on" line."""

    def __init__(
        self, args: Sequence[str], env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
    ) -> None:
        self.process = subprocess.Popen(
            [script("missionweaveprotocol-server"), *args], stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, env=_environment(env), cwd=cwd,
            preexec_fn=_sigint_default if _sigint_ignored() else None,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.stdout: list[str] = []
        self._stderr: list[str] = []
        self.url = ""
        threading.Thread(target=self._read_out, daemon=True).start()
        threading.Thread(target=self._read_err, daemon=True).start()

    def _read_out(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _read_err(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self._stderr.append(line)

    @property
    def stderr(self) -> str:
        return "".join(self._stderr)

    def ready(self) -> ServerProcess:
        while True:
            line = self.lines.get(timeout=WAIT)
            assert line is not None, f"the server exited before listening:\n{self.stderr}"
            self.stdout.append(line)
            if " listening on " in line:
                self.url = line.rsplit(" ", 1)[-1].strip()
                return self

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[-1].split("/", 1)[0])

    def signal(self, signum: int) -> None:
        self.process.send_signal(signum)

    def wait(self) -> int:
        return self.process.wait(timeout=WAIT)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=WAIT)
