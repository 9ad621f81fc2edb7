"""Verified wire Command → typed Command (the reference's ``ingress``, ``reference-python.md``
§1.8).

:meth:`CommandIngress.verify` runs the six-stage Signed Document Verification Profile (Command
profile) against the caller's key resolver; :meth:`CommandIngress.project_verified` makes the
:class:`~missionweaveprotocol.models.Command` of a verified document, with its
``verified_signing_hash`` and its exact signed bytes (so that ``Core.perform`` sends the bytes
that were verified). ``Core.perform`` itself verifies again, against the Organization's Registry,
and also checks freshness and the signer's authorization (§6.4): projecting is not applying.
"""

from __future__ import annotations

from typing import Any, Optional

from ._types import SignedDocumentKind
from .models import Command
from .signed_documents import SignedDocumentCodec, VerifiedSignedDocument


class CommandIngress:
    """``CommandIngress(codec=None)``: verify wire Command bytes, project them to a Command."""

    def __init__(self, codec: Optional[SignedDocumentCodec] = None) -> None:
        self.codec = codec if codec is not None else SignedDocumentCodec()

    def verify(self, raw_command_bytes: bytes, key_resolver: Any) -> VerifiedSignedDocument:
        """The six stages, Command profile (``SignedDocumentVerificationError`` on failure)."""
        return self.codec.verify(SignedDocumentKind.COMMAND, raw_command_bytes, key_resolver)

    @staticmethod
    def project_verified(verified: VerifiedSignedDocument) -> Command:
        """The Command of a verified Command document, with ``verified_signing_hash`` and the
        verified bytes kept. ``ValueError`` if the document is not a Command."""
        if verified.kind != SignedDocumentKind.COMMAND:
            raise ValueError(f"a {verified.kind} document is not a Command")
        return Command.from_wire(
            verified.received_bytes, verified_signing_hash=verified.signing_hash
        )


__all__ = ["CommandIngress"]
