"""The authoritative store seam (the reference's ``store``, ``reference-python.md`` §1.14).

:class:`InMemoryStore` is a handle to the Rust engine's in-memory store: one append-only Event
log per Group, aggregates (Mission, Group, Membership, WorkItem, Work Proposal, Artifact) each
with its own revision, deduplication receipts (``docs/store.md``). A
:class:`~missionweaveprotocol.core.Core` takes it; several Cores (threads) may share one.

The reference's ``AuthoritativeStore`` Protocol (``transact(operation)`` / ``inspect(operation)``
over one ``AuthoritativeState`` document) is **not** offered, on purpose: it hands a whole-state
document to every operation, so every Command costs O(state) — the reference deep-copies (in
memory) or re-parses and rewrites (SQL) all of its state per Command, and its latency grows
linearly with history (reference gap §7.7: 11.5 ms → 208 ms over 1,500 Commands). Here a
Command reads and writes only the aggregates it touches, through the engine's per-aggregate
store trait with optimistic revisions; the SQLite and PostgreSQL backends come in the next
issue behind the same trait.
"""

from __future__ import annotations

from . import _native


class InMemoryStore:
    """``InMemoryStore()``: the engine's in-memory, per-aggregate store (no whole-state document;
    see the module docstring). Reads go through :class:`~missionweaveprotocol.core.Core`'s
    ``query`` and ``replay``."""

    __slots__ = ("_native",)

    def __init__(self) -> None:
        self._native = _native.InMemoryStore()

    def last_sequence(self, group_id: str) -> int:
        """The last sequence of ``group_id``'s Event log (0 when it has no Events)."""
        return self._native.last_sequence(group_id)

    async def close(self) -> None:
        """Nothing to release (the reference's ``close``)."""


__all__ = ["InMemoryStore"]
