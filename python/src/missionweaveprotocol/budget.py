"""The hierarchical six-dimensional budget ledger (§12, §14).

Accounts form a tree: root Missions, their WorkItems (nested through ``parent_work_item_id``)
and child Missions promoted from a WorkItem. A child's limits are reserved against its parent
when registered, so the sum of direct children never exceeds the parent in any dimension. A
consumption is charged to the WorkItem and every ancestor atomically, or not at all
(:class:`BudgetLedgerError` with code ``BUDGET_EXCEEDED`` and ``dimension``). Every call walks
only the ancestry (the reference re-validated the whole ledger on each mutation).

:class:`ResourceUsage` holds the six amounts (money in integer micro-units); limits use the
same type, and a zero dimension allows nothing. Accounts are named by
``AccountRef = ("mission" | "work_item", id)``. ``snapshot()`` and ``BudgetLedger.rebuild``
round-trip, also through the JSON form (``BudgetLedgerSnapshot.to_dict``/``from_dict``).
"""

from __future__ import annotations

from typing import Tuple

from ._native import BudgetLedger, BudgetLedgerSnapshot, ResourceUsage
from .errors import BudgetLedgerError

AccountRef = Tuple[str, str]

__all__ = [
    "AccountRef",
    "BudgetLedger",
    "BudgetLedgerError",
    "BudgetLedgerSnapshot",
    "ResourceUsage",
]
