"""Event kinds written by the engine parse as ``models.EventKind`` (one spelling, the core's)."""

from missionweaveprotocol import _native
from missionweaveprotocol.models import EventKind


def test_execution_lease_revoked_is_the_engines_kind() -> None:
    # A session that replaces an earlier one revokes its Execution Leases (§11.3) with this
    # Event; ``Core.perform_all`` parses every Event it returns as an ``EventKind``.
    assert EventKind.EXECUTION_LEASE_REVOKED.value == _native.EXECUTION_LEASE_REVOKED_EVENT
    assert (
        EventKind("ext.missionweaveprotocol.core.work_execution_lease_revoked")
        is EventKind.EXECUTION_LEASE_REVOKED
    )


def test_a_kind_the_engine_does_not_write_is_refused() -> None:
    try:
        EventKind("ext.missionweaveprotocol.core.execution_lease_revoked")
    except ValueError:
        return
    raise AssertionError("the old misspelling must not parse")
