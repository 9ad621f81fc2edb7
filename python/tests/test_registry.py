"""Registry evidence: the native resolver, snapshots, invalid evidence at stage 4."""

from __future__ import annotations

from typing import Any, Dict

import pytest
from conftest import read

from missionweaveprotocol import registry as reg
from missionweaveprotocol import signed_documents as sd
from missionweaveprotocol.errors import InvalidInputError


def test_resolver_shape(golden: Dict[str, Any]) -> None:
    resolver = reg.AgentRegistryKeyResolver(golden["registry"])
    assert isinstance(resolver, reg.KeyResolver)
    assert resolver.organization_id == "urn:missionweaveprotocol:organization:acme"
    assert resolver.evidence_error is None
    verified = sd.SignedDocumentCodec().verify("command", golden["document"], resolver)
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

    sd.SignedDocumentCodec().verify("command", golden["document"], Spy())
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
        lambda: reg.KeyRegistrySnapshot("group-only", registry),
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
