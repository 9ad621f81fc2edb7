"""Fenced leases (§11.3, ``lease.schema.json``).

:class:`ExecutionLease` is immutable: ``renew`` and ``close`` (``release``/``revoke``/``expire``
through ``close``) return a new lease. Renewal is strictly monotonic and strictly extending and
must happen before expiry; closure is final (repeating the identical closure is a no-op, any
other closure raises). ``check_claim`` fences a lease-bound Command by holder, Session Epoch,
Ownership or Coordinator Epoch, Lease ID and time.

Instants are timezone-aware :class:`datetime.datetime` values, kept to the millisecond (finer
parts are floored). A naive datetime raises :class:`InvalidInputError`. Failures raise
:class:`LeaseError` with the wire code (``WORK_LEASE_EXPIRED``, ``WORK_STALE_OWNERSHIP``,
``AUTH_STALE_SESSION``, ``AUTH_STALE_COORDINATOR``, ``AUTH_FORBIDDEN``,
``INVALID_STATE_TRANSITION``, ``INVALID_COMMAND``).
"""

from __future__ import annotations

from ._native import ExecutionLease
from ._types import LeaseState, LeaseType
from .errors import InvalidInputError, LeaseError

MAX_SAFE_INTEGER = 9_007_199_254_740_991

__all__ = [
    "ExecutionLease",
    "InvalidInputError",
    "LeaseError",
    "LeaseState",
    "LeaseType",
    "MAX_SAFE_INTEGER",
]
