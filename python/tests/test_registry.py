"""Registry evidence: the native resolver, snapshots, invalid evidence at stage 4."""

from __future__ import annotations

from typing import Any, Dict

import pytest
from conftest import read

from missionweaveprotocol import registry as reg
from missionweaveprotocol import signed_documents as sd
from missionweaveprotocol.errors import InvalidInputError
from missionweaveprotocol.signed_documents import SignedDocumentKind


def test_resolver_shape(golden: Dict[str, Any]) -> None:
    resolver = reg.AgentRegistryKeyResolver(golden["registry"])
    assert isinstance(resolver, reg.KeyResolver)
    assert resolver.organization_id == "urn:missionweaveprotocol:organization:acme"
    assert resolver.evidence_error is None
    verified = sd.SignedDocumentCodec().verify(SignedDocumentKind.COMMAND, golden["document"], resolver)
    assert verified.resolved_key.organization_id == resolver.organization_id
    validity = verified.resolved_key.validity
    assert isinstance(validity, reg.KeyValidityEvidence)
    assert isinstance(validity.valid_from, sd.ProtectedTime)


def test_resolve_returns_organization_wide_snapshot(golden: Dict[str, Any]) -> None:
    resolver = reg.AgentRegistryKeyResolver(bytearray(golden["registry"]))
    seen = []

    class Spy:
        def resolve(self, request: reg.KeyResolutionRequest) -> reg.KeyRegistrySnapshot:
            seen.append(request)
            snapshot = resolver.resolve(request)
            assert snapshot.completeness is reg.KeyRegistryCompleteness.ORGANIZATION_WIDE
            assert snapshot.registry_bytes == golden["registry"]
            return snapshot

    sd.SignedDocumentCodec().verify(SignedDocumentKind.COMMAND, golden["document"], Spy())
    assert len(seen) == 1
    with pytest.raises(InvalidInputError):
        resolver.resolve("request")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "registry,reason",
    [
        (b"", "registry-evidence-malformed"),
        (b"{}", None),
        (b"not json", "registry-evidence-malformed"),
        (read("cryptography/keys/registry-key-alias.json"), "public-key-reused"),
    ],
)
def test_invalid_evidence_is_refused_at_construction(registry: bytes, reason: Any) -> None:
    # As in JavaScript: malformed evidence raises where it is made, with the stage-4 verdict.
    for make in (
        lambda: reg.AgentRegistryKeyResolver(registry),
        lambda: reg.KeyRegistrySnapshot("organization-wide", registry),
    ):
        with pytest.raises(sd.SignedDocumentVerificationError) as caught:
            make()
        assert caught.value.stage == "key-resolution"
        assert caught.value.code == "AUTH_INVALID_SIGNATURE"
        assert str(caught.value) == "AUTH_INVALID_SIGNATURE: signed document rejected"
        if reason is not None:
            assert caught.value.reason == reason


@pytest.mark.parametrize("args", [(None,), ("text",), (12,)])
def test_bad_registry_types(args: Any) -> None:
    with pytest.raises(InvalidInputError):
        reg.AgentRegistryKeyResolver(*args)
    with pytest.raises(InvalidInputError):
        reg.KeyRegistrySnapshot("organization-wide", *args)


def test_registry_cache_budget_and_held_snapshots() -> None:
    # Issue 9, item 2: the cache is bounded in bytes; snapshots keep working after eviction.
    from missionweaveprotocol.registry import registry_cache_stats, set_registry_cache_budget

    default = registry_cache_stats()["budget"]
    assert default == 128 * 1024 * 1024
    registry = read("cryptography/keys/registry-valid.json")
    document = read("cryptography/vectors/signed-documents/valid/command.json")
    try:
        held = reg.KeyRegistrySnapshot("organization-wide", registry)
        native = reg.AgentRegistryKeyResolver(registry + b" ")
        assert registry_cache_stats()["entries"] >= 2
        set_registry_cache_budget(0)  # evicts both; they keep their validated evidence
        assert registry_cache_stats() == {"entries": 0, "bytes": 0, "budget": 0}
        reg.KeyRegistrySnapshot("organization-wide", registry + b"  ")
        assert registry_cache_stats()["entries"] == 0

        class Held:
            def resolve(self, request: reg.KeyResolutionRequest) -> reg.KeyRegistrySnapshot:
                return held

        codec = sd.SignedDocumentCodec()
        for resolver in (Held(), native):
            verified = codec.verify(SignedDocumentKind.COMMAND, document, resolver)
            assert verified.kind == sd.SignedDocumentKind.COMMAND
        set_registry_cache_budget(default)
        reg.KeyRegistrySnapshot("organization-wide", registry + b"   ")
        stats = registry_cache_stats()
        assert stats["entries"] >= 1 and 0 < stats["bytes"] <= stats["budget"] == default
        for bad in (-1, True, 1.5, "1"):
            with pytest.raises(InvalidInputError):
                set_registry_cache_budget(bad)  # type: ignore[arg-type]
    finally:
        set_registry_cache_budget(default)
