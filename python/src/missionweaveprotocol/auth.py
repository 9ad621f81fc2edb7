"""Agent keys, one-use HELLO challenges and session tokens (§6.3), from the Rust core.

The reference's ``auth.py`` API: :class:`AgentKeyRegistry` (Organization-registered Ed25519
keys with ``valid_from``/``valid_until``/``revoked_at``; the earliest revocation is kept),
:class:`SessionAuthority` (one-use challenges, HMAC-SHA256 session tokens, a per-Agent Session
Epoch that strictly increases), :class:`AgentIdentity` (an Agent's signing key) and the frozen
dataclasses :class:`Challenge` and :class:`SessionGrant`. The rules run in the core
(``missionweaveprotocol_agent::auth``); this module converts times and values.

Every refusal is an :class:`AuthenticationError` (a ``ValueError``, as the reference's) with
the §19 ``code`` — ``AUTH_INVALID_SIGNATURE`` (bad, unknown, expired or replayed challenge,
wrong signature, unknown/revoked/expired key), ``AUTH_STALE_SESSION`` (a newer Session Epoch
was issued or synchronized), ``AUTH_REQUIRED`` (forged, malformed or expired token),
``UNSUPPORTED_VERSION``, ``RATE_LIMITED`` (too many pending challenges) or
``PROTOCOL_VIOLATION`` (misuse) — and a stable ``reason`` slug. No message names a secret,
token, MAC or signature.

Where this differs from the reference, on purpose:

- A challenge is spent by its first answer, **also a failed one** (the reference pops it too).
- Challenge times are whole milliseconds (``Challenge.signing_bytes()`` renders ``expiresAt``
  with ``isoformat()`` as the reference does: ``2026-01-02T03:04:05+00:00``,
  ``…05.006000+00:00``; §6.3 leaves the transcript undefined and it never travels).
- ``resolve`` returns the 32 public-key bytes (the package does not depend on
  ``cryptography``); ``register`` also accepts bytes or a key object for ``public_key``.
- A key ID is never re-registered with other material, another Agent or another
  ``valid_from``; re-registering may only add or move ``valid_until``/``revoked_at`` earlier.
- A given ``secret`` must be at least 32 bytes.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Callable, Optional

from . import _native
from ._native import SigningKey, encode_base64url
from .crypto import PublicKeyLike, load_public_key
# Defined with the package's other exception classes, where the core's error mapping finds it.
from .errors import AuthenticationError

Clock = Callable[[], datetime]

# The core's defaults (`SessionConfig::default()`): 30 s challenges, 15 min sessions.
_DEFAULT_CHALLENGE_TTL = timedelta(milliseconds=_native.AUTH_CHALLENGE_TTL_MS)
_DEFAULT_SESSION_TTL = timedelta(milliseconds=_native.AUTH_SESSION_TTL_MS)


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


def _ttl_ms(value: timedelta, what: str) -> int:
    if not isinstance(value, timedelta):
        raise AuthenticationError(
            f"{what} must be a timedelta", code="PROTOCOL_VIOLATION", reason="invalid_argument"
        )
    # A negative lifetime becomes 0, which the core refuses ("time-to-live must be positive"):
    # the rule and its text live in Rust.
    return max(value // timedelta(milliseconds=1), 0)


def default_agent_key_id(agent_id: str) -> str:
    """``urn:missionweaveprotocol:key:<last path or colon segment of agent_id>``."""
    return _native.auth_default_agent_key_id(agent_id)


@dataclass(frozen=True)
class AgentIdentity:
    """An Agent and its Ed25519 signing key (the key never appears in ``repr``)."""

    agent_id: str
    _private_key: SigningKey = field(repr=False)

    @classmethod
    def generate(cls, agent_id: str) -> "AgentIdentity":
        """A fresh key (OS randomness) under the Agent's default key ID."""
        return cls(agent_id, SigningKey.generate(default_agent_key_id(agent_id)))

    @property
    def public_key(self) -> str:
        """The public key as unpadded base64url."""
        return self._private_key.public_key

    @property
    def signing_key(self) -> SigningKey:
        """The Agent's signing key (its Registry key ID), for the normative signers
        (``SignedDocumentCodec.sign``, ``LocalArtifactStore.put(identity=…)``)."""
        return self._private_key

    def sign(self, payload: bytes) -> str:
        """The Ed25519 signature of ``payload`` as unpadded base64url."""
        return encode_base64url(self._private_key.sign(payload))


@dataclass(frozen=True)
class Challenge:
    """A one-use HELLO challenge (§6.3 ``server_challenge``)."""

    protocol_version: str
    challenge_id: str
    agent_id: str
    key_id: str
    client_nonce: str
    server_nonce: str
    expires_at: datetime

    @property
    def nonce(self) -> str:
        """The server nonce."""
        return self.server_nonce

    def signing_bytes(self) -> bytes:
        """The canonical (RFC 8785) challenge transcript the Agent signs."""
        return _native.auth_challenge_signing_bytes(
            self.protocol_version,
            self.challenge_id,
            self.agent_id,
            self.key_id,
            self.client_nonce,
            self.server_nonce,
            self.expires_at,
        )


@dataclass(frozen=True)
class SessionGrant:
    """An opened session: its Session Epoch, validity window and bearer token."""

    agent_id: str
    key_id: str
    protocol_version: str
    session_epoch: int
    issued_at: datetime
    expires_at: datetime
    token: str = field(repr=False)


class AgentKeyRegistry:
    """The Organization's Agent keys; :class:`SessionAuthority` sees later changes."""

    def __init__(self) -> None:
        self._native = _native.NativeAgentKeyRegistry()

    def register(
        self,
        agent_id: str,
        public_key: PublicKeyLike,
        *,
        key_id: Optional[str] = None,
        valid_from: Optional[datetime] = None,
        valid_until: Optional[datetime] = None,
        revoked_at: Optional[datetime] = None,
    ) -> None:
        """Registers the key (base64url text, 32 bytes or a key object)."""
        self._native.register(
            agent_id, load_public_key(public_key), key_id, valid_from, valid_until, revoked_at
        )

    def resolve(
        self, agent_id: str, key_id: Optional[str] = None, *, at: Optional[datetime] = None
    ) -> bytes:
        """The 32 public-key bytes of the Agent's key valid at ``at`` (default: now)."""
        return self._native.resolve(agent_id, key_id, _utc_now() if at is None else at)

    def matches_registered_public_key(
        self, agent_id: str, key_id: str, public_key_bytes: bytes
    ) -> bool:
        """Whether the bytes are the key's registered material (constant-time comparison)."""
        return self._native.matches_registered_public_key(agent_id, key_id, public_key_bytes)

    def revoke(
        self, agent_id: str, key_id: str, *, revoked_at: Optional[datetime] = None
    ) -> None:
        """Revokes the key from ``revoked_at`` (default: now); the earliest revocation is kept."""
        self._native.revoke(agent_id, key_id, _utc_now() if revoked_at is None else revoked_at)


class SessionAuthority:
    """One-use challenges, HMAC-SHA256 session tokens and per-Agent Session Epochs.

    ``secret`` defaults to 32 random bytes (tokens then do not survive the process); it is
    handed to the core and not kept here. ``clock`` returns aware datetimes (default: UTC now).
    """

    def __init__(
        self,
        registry: AgentKeyRegistry,
        *,
        secret: Optional[bytes] = None,
        challenge_ttl: timedelta = _DEFAULT_CHALLENGE_TTL,
        session_ttl: timedelta = _DEFAULT_SESSION_TTL,
        clock: Optional[Clock] = None,
    ) -> None:
        if not isinstance(registry, AgentKeyRegistry):
            raise AuthenticationError(
                "registry must be an AgentKeyRegistry",
                code="PROTOCOL_VIOLATION",
                reason="invalid_argument",
            )
        self._registry = registry
        self._clock: Clock = clock or _utc_now
        self._native = _native.NativeSessionAuthority(
            registry._native,
            secrets.token_bytes(32) if secret is None else secret,
            challenge_ttl_ms=_ttl_ms(challenge_ttl, "challenge_ttl"),
            session_ttl_ms=_ttl_ms(session_ttl, "session_ttl"),
        )

    def __repr__(self) -> str:
        return "SessionAuthority(<secret redacted>)"

    def issue_challenge(
        self,
        agent_id: str,
        *,
        key_id: Optional[str] = None,
        client_nonce: Optional[str] = None,
        protocol_version: str = _native.PROTOCOL_VERSION,
    ) -> Challenge:
        """A fresh one-use challenge for the Agent's registered, currently valid key."""
        fields = self._native.issue_challenge(
            agent_id, key_id, client_nonce, protocol_version, self._clock()
        )
        return Challenge(*fields)

    def open_session(self, challenge_id: str, signature: str) -> SessionGrant:
        """Spends the challenge; a valid signature opens a session at the next epoch."""
        return SessionGrant(*self._native.open_session(challenge_id, signature, self._clock()))

    def verify_session(self, token: str) -> SessionGrant:
        """The session ``token`` proves now: MAC, expiry, current epoch, key still valid."""
        return SessionGrant(*self._native.verify_session(token, self._clock()))

    def synchronize_epoch(
        self, agent_id: str, authoritative_epoch: int, *, key_id: Optional[str] = None
    ) -> None:
        """Adopts the authoritative Core's epoch (never lowers it). With ``key_id``, that key
        must be registered for the Agent."""
        self._native.synchronize_epoch(agent_id, authoritative_epoch, key_id)

    def current_epoch(self, agent_id: str) -> int:
        """The Agent's current Session Epoch (0 before its first session)."""
        return self._native.current_epoch(agent_id)


__all__ = [
    "AgentIdentity",
    "AgentKeyRegistry",
    "AuthenticationError",
    "Challenge",
    "SessionAuthority",
    "SessionGrant",
    "default_agent_key_id",
]
