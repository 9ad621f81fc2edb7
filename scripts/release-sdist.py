#!/usr/bin/env python3
"""Adds the pinned protocol bundle to the source distribution maturin wrote.

    scripts/release-sdist.py SDIST.tar.gz PROTOCOL_ROOT

Why: core/protocol/build.rs embeds the bundle files named in core/protocol/protocol.pin and
refuses any other bytes. A checkout reads them from MWP_PROTOCOL_ROOT (default
../shared/protocol); an sdist unpacked by pip has no such sibling, so it carries the pinned
files (and the bundle's LICENSE) in `core/protocol/bundle/`, which build.rs reads when
MWP_PROTOCOL_ROOT is unset. Only pinned files are copied, each checked against the pin here,
so a stale bundle fails the release instead of a user's `pip install`.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

BUNDLE_DIR = "core/protocol/bundle"
PIN = "core/protocol/protocol.pin"


class SdistError(Exception):
    """The sdist or the bundle is not what the release expects."""


def pinned_files(pin_text: str) -> list[tuple[str, int, str]]:
    """(path, length, sha256) of every pinned file, in pin order."""
    entries = []
    for line in pin_text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        if line.startswith(("source-commit ", "protocol-version ")):
            continue
        sha, length, rel = line.split(" ", 2)
        entries.append((rel, int(length), sha))
    if not entries:
        raise SdistError("protocol.pin names no files")
    return entries


def prune_lock(
    members: list[tuple[tarfile.TarInfo, bytes | None]], prefix: str
) -> list[tuple[tarfile.TarInfo, bytes | None]]:
    """The sdist's workspace lists fewer members than the repository's, so its Cargo.lock names
    packages it no longer needs and `cargo build --locked` (pyproject `locked = true`) would
    refuse it. Cargo drops those entries (never changing a version) in an unpacked copy."""
    with tempfile.TemporaryDirectory() as tmp:
        for member, data in members:
            if data is not None:
                path = Path(tmp) / member.name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
        root = Path(tmp) / prefix
        subprocess.run(["cargo", "metadata", "--offline", "--format-version", "1"], cwd=root,
                       check=True, stdout=subprocess.DEVNULL)
        subprocess.run(["cargo", "metadata", "--offline", "--locked", "--format-version", "1"],
                       cwd=root, check=True, stdout=subprocess.DEVNULL)
        lock = (root / "Cargo.lock").read_bytes()
    pruned = []
    for member, data in members:
        if member.name == f"{prefix}/Cargo.lock":
            member.size = len(lock)
            data = lock
        pruned.append((member, data))
    return pruned


def add_bundle(sdist: Path, protocol_root: Path) -> int:
    """Rewrites `sdist` with the bundle added; returns the number of files added."""
    members: list[tuple[tarfile.TarInfo, bytes | None]] = []
    with tarfile.open(sdist, "r:gz") as tar:
        for member in tar.getmembers():
            handle = tar.extractfile(member) if member.isfile() else None
            members.append((member, handle.read() if handle is not None else None))
    prefix = members[0][0].name.split("/", 1)[0]
    names = {m.name for m, _ in members}
    pin_member = f"{prefix}/{PIN}"
    if pin_member not in names:
        raise SdistError(f"{sdist.name} has no {PIN}")
    if any(name.startswith(f"{prefix}/{BUNDLE_DIR}/") for name in names):
        raise SdistError(f"{sdist.name} already carries {BUNDLE_DIR}")
    pin_text = next(data for m, data in members if m.name == pin_member)
    if pin_text is None:
        raise SdistError(f"{PIN} in {sdist.name} is not a file")
    added: list[tuple[str, bytes]] = []
    for rel, length, sha in pinned_files(pin_text.decode()):
        data = (protocol_root / rel).read_bytes()
        if len(data) != length or hashlib.sha256(data).hexdigest() != sha:
            raise SdistError(f"{protocol_root / rel} differs from the pin")
        added.append((rel, data))
    added.append(("LICENSE", (protocol_root / "LICENSE").read_bytes()))
    members = prune_lock(members, prefix)
    mtime = members[0][0].mtime
    buffer = io.BytesIO()
    # A fixed gzip mtime and member order: the same inputs give the same bytes.
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=mtime) as gz:
        with tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as out:
            for member, payload in members:
                out.addfile(member, io.BytesIO(payload) if payload is not None else None)
            for rel, content in added:
                info = tarfile.TarInfo(f"{prefix}/{BUNDLE_DIR}/{rel}")
                info.size = len(content)
                info.mode = 0o644
                info.mtime = mtime
                out.addfile(info, io.BytesIO(content))
    sdist.write_bytes(buffer.getvalue())
    return len(added)


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        count = add_bundle(Path(argv[1]), Path(argv[2]))
    except (SdistError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(f"{argv[1]}: added {count} protocol bundle files under {BUNDLE_DIR}/")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
