"""First Admission and historical trust (§6.4, after the six stages).

``admit_first(verified, log, context)`` anchors a newly presented, verified document with a
First-Admission Record; ``replay_historical(verified, log)`` requires one to exist already.
``log`` is :class:`InMemoryAdmissionLog` or any :class:`AdmissionLog` (``lookup``/``append``
returning :class:`LookupOutcome`/:class:`AppendOutcome`); anything else it returns, and any
exception it raises, fails closed. Failures raise :class:`AdmissionError`.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from ._native import (
    AdmittedDocument,
    AppendOutcome,
    AuthenticatedRecord,
    FirstAdmissionRecord,
    InMemoryAdmissionLog,
    LookupOutcome,
    TrustedAcceptanceContext,
    admit_first,
    replay_historical,
    validate_record,
)
from .errors import AdmissionError


@runtime_checkable
class AdmissionLog(Protocol):
    """An Admission Log adapter: authoritative lookup and atomic append-or-return-existing."""

    def lookup(self, organization_id: str, signing_hash: str) -> LookupOutcome: ...

    def append(self, candidate: FirstAdmissionRecord, candidate_bytes: bytes) -> AppendOutcome: ...


__all__ = [
    "AdmissionError",
    "AdmissionLog",
    "AdmittedDocument",
    "AppendOutcome",
    "AuthenticatedRecord",
    "FirstAdmissionRecord",
    "InMemoryAdmissionLog",
    "LookupOutcome",
    "TrustedAcceptanceContext",
    "admit_first",
    "replay_historical",
    "validate_record",
]
