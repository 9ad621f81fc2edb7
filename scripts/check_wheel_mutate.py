#!/usr/bin/env python3
"""Writes a deliberately broken copy of a wheel, for the negative cases of check_wheel.py.

    scripts/check_wheel_mutate.py WHEEL OUT_DIR MUTATION     prints the new wheel's path

MUTATION: older-glibc (tags claim one glibc minor version below the extension's newest
symbol version), musllinux (tags claim musllinux_1_2 for a glibc extension), drop-py-typed,
drop-demo-script (the entry point of missionweaveprotocol-demo removed), rename-only (the file
name claims another platform, the WHEEL Tag lines do not), linux-local (tagged `linux_<arch>`,
as pip tags a wheel it builds from the sdist), linux-other-arch (tagged `linux_<other arch>`).
"""

from __future__ import annotations

import re
import sys
import tempfile
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_wheel import EXTENSION, elf_facts  # noqa: E402


def main(argv: list[str]) -> int:
    wheel, out_dir, mutation = Path(argv[1]), Path(argv[2]), argv[3]
    stem = re.fullmatch(r"(.+-cp\d+-abi3)-([\w.]+)\.whl", wheel.name)
    if not stem:
        print(f"not an abi3 wheel: {wheel.name}", file=sys.stderr)
        return 2
    prefix, platforms = stem.groups()
    arch = "aarch64" if platforms.endswith("aarch64") else "x86_64"
    with zipfile.ZipFile(wheel) as source:
        entries = {info.filename: source.read(info) for info in source.infolist()}
        with tempfile.TemporaryDirectory() as tmp:
            facts = elf_facts(Path(source.extract(EXTENSION, tmp)))
    new_platform = platforms
    retag = True
    if mutation == "older-glibc":
        newest = facts.max_glibc()
        if newest is None:
            print("the extension needs no glibc symbol version", file=sys.stderr)
            return 2
        new_platform = f"manylinux_{newest[0]}_{newest[1] - 1}_{arch}"
    elif mutation == "musllinux":
        new_platform = f"musllinux_1_2_{arch}"
    elif mutation == "drop-py-typed":
        del entries["missionweaveprotocol/py.typed"]
    elif mutation == "drop-demo-script":
        name = next(n for n in entries if n.endswith(".dist-info/entry_points.txt"))
        entries[name] = re.sub(rb"(?m)^missionweaveprotocol-demo\s*=.*\n", b"", entries[name])
    elif mutation == "linux-local":
        new_platform = f"linux_{arch}"
    elif mutation == "linux-other-arch":
        new_platform = f"linux_{'x86_64' if arch == 'aarch64' else 'aarch64'}"
    elif mutation == "rename-only":
        new_platform, retag = f"manylinux_2_99_{arch}", False
    else:
        print(f"unknown mutation {mutation}", file=sys.stderr)
        return 2
    if retag and new_platform != platforms:
        name = next(n for n in entries if n.endswith(".dist-info/WHEEL"))
        text = re.sub(r"(?m)^Tag: .*\n", "", entries[name].decode())
        python_abi = "-".join(prefix.split("-")[-2:])
        entries[name] = (text + f"Tag: {python_abi}-{new_platform}\n").encode()
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f"{prefix}-{new_platform}.whl"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as copy:
        for name, data in entries.items():
            copy.writestr(name, data)
    print(target)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
