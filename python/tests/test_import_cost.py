"""``import missionweaveprotocol`` stays cheap: pydantic (a runtime dependency since the lease
and budget models are pydantic models) and the native module load only when a name that needs
them is first used. Checked on ``sys.modules`` in a fresh interpreter, never by timing."""

from __future__ import annotations

import subprocess
import sys
from typing import List


def loaded_after(statement: str) -> List[str]:
    code = (
        f"import sys\n{statement}\n"
        "print(' '.join(sorted(m for m in sys.modules\n"
        "    if m.split('.')[0] in ('pydantic', 'pydantic_core')\n"
        "    or m.startswith('missionweaveprotocol'))))"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return run.stdout.split()


def test_the_package_root_imports_neither_pydantic_nor_the_native_module() -> None:
    assert loaded_after("import missionweaveprotocol") == ["missionweaveprotocol"]


def test_pydantic_loads_with_the_first_model_and_not_before() -> None:
    lease = loaded_after("import missionweaveprotocol as m; m.ExecutionLease")
    assert "pydantic" in lease and "missionweaveprotocol._native" not in lease
    built = loaded_after(
        "import missionweaveprotocol as m\n"
        "from datetime import datetime, timezone\n"
        "t = datetime(2026, 1, 1, tzinfo=timezone.utc)\n"
        "m.ExecutionLease(lease_id='urn:l:1', mission_id='urn:m:1', group_id='urn:g:1',\n"
        "    work_item_id='urn:w:1', holder_agent_id='urn:a:1', session_epoch=1,\n"
        "    ownership_epoch=1, issued_at=t, starts_at=t, expires_at=t.replace(hour=1))"
    )
    assert "missionweaveprotocol._native" in built
    snapshot = loaded_after("import missionweaveprotocol as m; m.BudgetLedgerSnapshot")
    assert "pydantic" in snapshot
    signing = loaded_after("import missionweaveprotocol as m; m.SigningKey")
    assert "missionweaveprotocol._native" in signing and "pydantic" not in signing
    scheduler = loaded_after("import missionweaveprotocol.scheduler")
    assert "pydantic" not in scheduler
