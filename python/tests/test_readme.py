"""The README's quickstart block runs as written against the installed package."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def test_quickstart_block_runs(capsys: pytest.CaptureFixture[str]) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert blocks, "python/README.md has no python block"
    exec(compile(blocks[0], str(README), "exec"), {})  # noqa: S102 - our own documentation
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        "urn:example:agent:planner",
        "AUTH_INVALID_SIGNATURE: signed document rejected",
        "signature signature-mismatch",
    ]
