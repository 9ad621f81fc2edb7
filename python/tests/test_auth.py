"""Agent keys, one-use challenges, session tokens and Session Epochs (§6.3) through Python:
the reference's ``auth.py`` names and signatures, each rule with a positive and a negative
case and its §19 code."""

from __future__ import annotations

import base64
import dataclasses
import inspect
import json
from datetime import datetime, timedelta, timezone
from typing import Callable, List

import pytest

from missionweaveprotocol.auth import (
    AgentIdentity,
    AgentKeyRegistry,
    AuthenticationError,
    Challenge,
    SessionAuthority,
    SessionGrant,
    default_agent_key_id,
)
from missionweaveprotocol.crypto import SigningKey
from missionweaveprotocol import errors
from missionweaveprotocol.errors import MissionWeaveError

T0 = datetime(2026, 6, 1, tzinfo=timezone.utc)
ALICE = "urn:missionweaveprotocol:agent:alice"
BOB = "urn:missionweaveprotocol:agent:bob"
SECRET = b"python-test-secret-0123456789abc"


class Clock:
    """A settable clock."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


def identity(agent: str, seed: int) -> AgentIdentity:
    return AgentIdentity(agent, SigningKey(default_agent_key_id(agent), bytes([seed]) * 32))


@pytest.fixture
def world() -> tuple[AgentKeyRegistry, SessionAuthority, Clock, AgentIdentity, AgentIdentity]:
    alice, bob = identity(ALICE, 1), identity(BOB, 2)
    registry = AgentKeyRegistry()
    registry.register(ALICE, alice.public_key)
    registry.register(BOB, bob.public_key)
    clock = Clock()
    return registry, SessionAuthority(registry, secret=SECRET, clock=clock), clock, alice, bob


def login(authority: SessionAuthority, who: AgentIdentity) -> SessionGrant:
    challenge = authority.issue_challenge(who.agent_id)
    return authority.open_session(challenge.challenge_id, who.sign(challenge.signing_bytes()))


def refused(call: Callable[[], object], code: str, reason: str) -> AuthenticationError:
    with pytest.raises(AuthenticationError) as info:
        call()
    assert info.value.code == code, info.value
    assert info.value.reason == reason, info.value
    return info.value


def b64decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


# ---- the reference's public names and shapes --------------------------------------------


def test_public_api_mirrors_the_reference() -> None:
    assert issubclass(AuthenticationError, ValueError)
    assert issubclass(AuthenticationError, MissionWeaveError)
    for cls, fields in [
        (AgentIdentity, ["agent_id", "_private_key"]),
        (Challenge, ["protocol_version", "challenge_id", "agent_id", "key_id", "client_nonce",
                     "server_nonce", "expires_at"]),
        (SessionGrant, ["agent_id", "key_id", "protocol_version", "session_epoch", "issued_at",
                        "expires_at", "token"]),
    ]:
        assert dataclasses.is_dataclass(cls)
        assert cls.__dataclass_params__.frozen  # type: ignore[attr-defined]
        assert [f.name for f in dataclasses.fields(cls)] == fields
    assert list(inspect.signature(AgentKeyRegistry.register).parameters) == [
        "self", "agent_id", "public_key", "key_id", "valid_from", "valid_until", "revoked_at"]
    assert list(inspect.signature(SessionAuthority).parameters) == [
        "registry", "secret", "challenge_ttl", "session_ttl", "clock"]
    assert list(inspect.signature(SessionAuthority.issue_challenge).parameters) == [
        "self", "agent_id", "key_id", "client_nonce", "protocol_version"]
    assert list(inspect.signature(SessionAuthority.synchronize_epoch).parameters) == [
        "self", "agent_id", "authoritative_epoch", "key_id"]


def test_default_agent_key_id() -> None:
    assert default_agent_key_id("agent://acme/reviewer") == "urn:missionweaveprotocol:key:reviewer"
    assert default_agent_key_id("urn:x:agent:planner") == "urn:missionweaveprotocol:key:planner"
    refused(lambda: default_agent_key_id("agent://acme/"), "PROTOCOL_VIOLATION",
            "invalid_argument")


def test_agent_identity_signs_and_hides_its_key() -> None:
    who = AgentIdentity.generate(ALICE)
    assert len(b64decode(who.public_key)) == 32
    assert len(b64decode(who.sign(b"payload"))) == 64
    assert "private" not in repr(who)
    assert who.sign(b"payload") != AgentIdentity.generate(ALICE).sign(b"payload")


# ---- registry --------------------------------------------------------------------------


def test_registry_resolves_within_the_validity_window() -> None:
    who = identity(ALICE, 3)
    registry = AgentKeyRegistry()
    registry.register(ALICE, who.public_key, valid_from=T0, valid_until=T0 + timedelta(hours=1))
    key_id = default_agent_key_id(ALICE)
    assert registry.resolve(ALICE, at=T0) == b64decode(who.public_key)
    assert registry.resolve(ALICE, key_id, at=T0 + timedelta(minutes=59)) == b64decode(who.public_key)
    refused(lambda: registry.resolve(ALICE, at=T0 - timedelta(seconds=1)),
            "AUTH_INVALID_SIGNATURE", "key_not_yet_valid")
    refused(lambda: registry.resolve(ALICE, at=T0 + timedelta(hours=1)),
            "AUTH_INVALID_SIGNATURE", "key_expired")
    refused(lambda: registry.resolve(BOB, at=T0), "AUTH_INVALID_SIGNATURE", "unknown_key")
    assert registry.matches_registered_public_key(ALICE, key_id, b64decode(who.public_key))
    assert not registry.matches_registered_public_key(ALICE, key_id, bytes(32))
    assert not registry.matches_registered_public_key(BOB, key_id, b64decode(who.public_key))


def test_registry_refuses_bad_keys_and_reuse() -> None:
    registry = AgentKeyRegistry()
    refused(lambda: registry.register(ALICE, b"\x01" + bytes(31)), "PROTOCOL_VIOLATION",
            "invalid_public_key")
    registry.register(ALICE, identity(ALICE, 1).public_key)
    refused(lambda: registry.register(ALICE, identity(ALICE, 2).public_key),
            "PROTOCOL_VIOLATION", "key_id_reused")
    refused(lambda: registry.register(BOB, identity(ALICE, 1).public_key,
                                      key_id=default_agent_key_id(ALICE)),
            "PROTOCOL_VIOLATION", "key_id_reused")
    with pytest.raises(ValueError):
        registry.register(ALICE, "not base64!")


def test_revocation_keeps_the_earliest() -> None:
    registry = AgentKeyRegistry()
    registry.register(ALICE, identity(ALICE, 1).public_key)
    key_id = default_agent_key_id(ALICE)
    registry.revoke(ALICE, key_id, revoked_at=T0 + timedelta(minutes=10))
    registry.revoke(ALICE, key_id, revoked_at=T0 + timedelta(minutes=20))
    assert registry.resolve(ALICE, at=T0 + timedelta(minutes=9))
    refused(lambda: registry.resolve(ALICE, at=T0 + timedelta(minutes=10)),
            "AUTH_INVALID_SIGNATURE", "key_revoked")
    refused(lambda: registry.revoke(BOB, key_id), "AUTH_INVALID_SIGNATURE", "unknown_key")


def test_naive_datetimes_are_refused() -> None:
    registry = AgentKeyRegistry()
    registry.register(ALICE, identity(ALICE, 1).public_key)
    with pytest.raises(ValueError):
        registry.resolve(ALICE, at=datetime(2026, 1, 1))


# ---- challenges and sessions ---------------------------------------------------------


def test_challenge_response_opens_a_session(world) -> None:  # type: ignore[no-untyped-def]
    registry, authority, clock, alice, _ = world
    challenge = authority.issue_challenge(ALICE, client_nonce="Y2xpZW50")
    assert challenge.nonce == challenge.server_nonce
    assert challenge.client_nonce == "Y2xpZW50"
    assert challenge.expires_at == T0 + timedelta(seconds=30)
    transcript = json.loads(challenge.signing_bytes())
    assert transcript == {
        "agentId": ALICE, "challengeId": challenge.challenge_id, "clientNonce": "Y2xpZW50",
        "expiresAt": "2026-06-01T00:00:30+00:00", "keyId": default_agent_key_id(ALICE),
        "protocolVersion": "0.1", "serverNonce": challenge.server_nonce,
    }
    # The reference's rendering of the field (issue 25): isoformat(), not the wire's `Z`.
    assert transcript["expiresAt"] == challenge.expires_at.isoformat()
    clock.advance(seconds=1)
    grant = authority.open_session(challenge.challenge_id, alice.sign(challenge.signing_bytes()))
    assert (grant.agent_id, grant.key_id, grant.session_epoch) == (
        ALICE, default_agent_key_id(ALICE), 1)
    assert grant.issued_at == T0 + timedelta(seconds=1)
    assert grant.expires_at == grant.issued_at + timedelta(minutes=15)
    assert 16 <= len(grant.token) <= 8192
    assert authority.verify_session(grant.token) == grant
    assert authority.current_epoch(ALICE) == 1


def test_issue_challenge_refusals(world) -> None:  # type: ignore[no-untyped-def]
    registry, authority, _, _, _ = world
    refused(lambda: authority.issue_challenge(ALICE, protocol_version="9.9"),
            "UNSUPPORTED_VERSION", "unsupported_version")
    refused(lambda: authority.issue_challenge("urn:x:agent:carol"), "AUTH_INVALID_SIGNATURE",
            "unknown_key")
    refused(lambda: authority.issue_challenge(ALICE, client_nonce="a=b"), "PROTOCOL_VIOLATION",
            "invalid_argument")


def test_challenges_are_single_use_even_after_failure(world) -> None:  # type: ignore[no-untyped-def]
    _, authority, _, alice, bob = world
    challenge = authority.issue_challenge(ALICE)
    good = alice.sign(challenge.signing_bytes())
    authority.open_session(challenge.challenge_id, good)
    refused(lambda: authority.open_session(challenge.challenge_id, good),
            "AUTH_INVALID_SIGNATURE", "unknown_challenge")
    challenge = authority.issue_challenge(ALICE)
    refused(lambda: authority.open_session(challenge.challenge_id,
                                           bob.sign(challenge.signing_bytes())),
            "AUTH_INVALID_SIGNATURE", "invalid_signature")
    refused(lambda: authority.open_session(challenge.challenge_id,
                                           alice.sign(challenge.signing_bytes())),
            "AUTH_INVALID_SIGNATURE", "unknown_challenge")
    assert authority.current_epoch(ALICE) == 1


def test_expired_challenge(world) -> None:  # type: ignore[no-untyped-def]
    _, authority, clock, alice, _ = world
    challenge = authority.issue_challenge(ALICE)
    clock.advance(seconds=30)
    refused(lambda: authority.open_session(challenge.challenge_id,
                                           alice.sign(challenge.signing_bytes())),
            "AUTH_INVALID_SIGNATURE", "challenge_expired")


def test_cross_agent_and_malformed_signatures(world) -> None:  # type: ignore[no-untyped-def]
    _, authority, _, alice, bob = world
    alices = authority.issue_challenge(ALICE)
    bobs = authority.issue_challenge(BOB)
    refused(lambda: authority.open_session(alices.challenge_id, alice.sign(bobs.signing_bytes())),
            "AUTH_INVALID_SIGNATURE", "invalid_signature")
    refused(lambda: authority.open_session(bobs.challenge_id, alice.sign(bobs.signing_bytes())),
            "AUTH_INVALID_SIGNATURE", "invalid_signature")
    for bad in ["", "AAAA", alice.sign(b"x") + "="]:
        challenge = authority.issue_challenge(ALICE)
        refused(lambda: authority.open_session(challenge.challenge_id, bad),
                "AUTH_INVALID_SIGNATURE", "invalid_signature")
    assert authority.current_epoch(ALICE) == 0 and authority.current_epoch(BOB) == 0


def test_epochs_increase_and_fence_older_tokens(world) -> None:  # type: ignore[no-untyped-def]
    _, authority, _, alice, bob = world
    grants: List[SessionGrant] = [login(authority, alice) for _ in range(3)]
    assert [g.session_epoch for g in grants] == [1, 2, 3]
    assert login(authority, bob).session_epoch == 1
    for stale in grants[:2]:
        refused(lambda: authority.verify_session(stale.token), "AUTH_STALE_SESSION",
                "stale_session")
    assert authority.verify_session(grants[2].token).session_epoch == 3


def test_synchronize_epoch(world) -> None:  # type: ignore[no-untyped-def]
    _, authority, _, alice, _ = world
    grant = login(authority, alice)
    authority.synchronize_epoch(ALICE, 5, key_id=default_agent_key_id(ALICE))
    assert authority.current_epoch(ALICE) == 5
    refused(lambda: authority.verify_session(grant.token), "AUTH_STALE_SESSION", "stale_session")
    authority.synchronize_epoch(ALICE, 2)
    assert authority.current_epoch(ALICE) == 5, "never lowered"
    assert login(authority, alice).session_epoch == 6
    refused(lambda: authority.synchronize_epoch(ALICE, 0), "PROTOCOL_VIOLATION",
            "invalid_argument")
    refused(lambda: authority.synchronize_epoch(ALICE, 7, key_id="urn:x:key:other"),
            "AUTH_INVALID_SIGNATURE", "unknown_key")
    assert authority.current_epoch(ALICE) == 6


def test_expired_forged_and_foreign_tokens(world) -> None:  # type: ignore[no-untyped-def]
    registry, authority, clock, alice, _ = world
    grant = login(authority, alice)
    body, mac = grant.token.split(".")
    claims = json.loads(b64decode(body))
    claims["expiresAt"] += 1
    forged_body = b64encode(json.dumps(claims, separators=(",", ":"), sort_keys=True).encode())
    other = SessionAuthority(registry, secret=b"another-secret-0123456789abcdef!", clock=clock)
    other.synchronize_epoch(ALICE, 1)
    foreign = login(other, alice)
    for forged in [f"{forged_body}.{mac}", f"{body}.{mac[:-2]}", "", "x" * 9000, f"{body}.",
                   foreign.token]:
        refused(lambda: authority.verify_session(forged), "AUTH_REQUIRED", "invalid_token")
    clock.advance(minutes=15)
    refused(lambda: authority.verify_session(grant.token), "AUTH_REQUIRED", "session_expired")


def test_token_of_revoked_key(world) -> None:  # type: ignore[no-untyped-def]
    registry, authority, clock, alice, _ = world
    grant = login(authority, alice)
    registry.revoke(ALICE, default_agent_key_id(ALICE), revoked_at=T0 + timedelta(seconds=5))
    assert authority.verify_session(grant.token)
    clock.advance(seconds=5)
    refused(lambda: authority.verify_session(grant.token), "AUTH_INVALID_SIGNATURE",
            "key_revoked")


def test_refusals_come_from_the_shared_error_mapping() -> None:
    # One class, defined with the others in `errors` and re-exported by `auth`; the native
    # module raises it with the core's description (code, reason, retryable, no fields).
    assert AuthenticationError is errors.AuthenticationError
    assert "AuthenticationError" in errors.__all__
    error = refused(lambda: AgentKeyRegistry().resolve(ALICE, at=T0), "AUTH_INVALID_SIGNATURE",
                    "unknown_key")
    assert type(error) is errors.AuthenticationError
    assert error.retryable is False and error.stage is None and dict(error.fields) == {}
    assert str(error) == error.detail == "no registered key for this Agent and key ID"
    # The reference's constructor shape: a message alone, AUTH_INVALID_SIGNATURE by default.
    raised = AuthenticationError("challenge expired")
    assert raised.code == "AUTH_INVALID_SIGNATURE" and str(raised) == "challenge expired"
    assert AuthenticationError("x", code="RATE_LIMITED").retryable is True


def test_configuration_is_checked() -> None:
    registry = AgentKeyRegistry()
    refused(lambda: SessionAuthority(registry, secret=b"short"), "PROTOCOL_VIOLATION",
            "invalid_argument")
    refused(lambda: SessionAuthority(registry, challenge_ttl=timedelta(0)), "PROTOCOL_VIOLATION",
            "invalid_argument")
    # The core decides positivity (and words it); Python only converts the timedelta.
    error = refused(lambda: SessionAuthority(registry, session_ttl=timedelta(seconds=-1)),
                    "PROTOCOL_VIOLATION", "invalid_argument")
    assert "time-to-live must be positive" in str(error)
    SessionAuthority(registry)  # a random secret


def test_no_secret_or_token_in_reprs_and_errors(world) -> None:  # type: ignore[no-untyped-def]
    _, authority, _, alice, _ = world
    grant = login(authority, alice)
    mac = grant.token.split(".")[1]
    error = refused(lambda: authority.verify_session(grant.token + "x"), "AUTH_REQUIRED",
                    "invalid_token")
    for text in [repr(authority), repr(grant), str(error), repr(error), str(error.detail),
                 repr(authority._native)]:
        assert SECRET.decode() not in text
        assert b64encode(SECRET) not in text
        assert mac not in text
        assert grant.token not in text
