#!/usr/bin/env python3
"""Checks a built wheel of `missionweaveprotocol`: contents, version and platform tag.

    scripts/check_wheel.py [--local] WHEEL...

Contents: the extension, `py.typed`, the stubs, the three console scripts of the reference
(reference-python.md §2.3), the licence, `License-Expression`, and the workspace version
(Cargo.toml `[workspace.package] version`, the one version of the release).

Tag (what `auditwheel show` decides, computed from the ELF file with `readelf`, which reads
any architecture): the interpreter/ABI tag is `cp39-abi3`; every platform tag names the
extension's machine; a `manylinux_X_Y` (or `manylinux2014` = 2.17) tag needs no GLIBC symbol
version newer than X.Y and only the libraries that policy allows; a `musllinux_X_Y` tag needs
no glibc symbol versions and only musl's libc; a bare `linux_*` tag is refused (no installer
accepts it from an index) unless `--local` is given: a wheel pip builds from the sdist on
the machine that installs it is tagged `linux_<arch>`, and that tag only needs the machine to
match. The WHEEL file's `Tag:` lines must equal the file name's tags.
Prints an `auditwheel show`-style report; exits 1 with the reasons on any failure.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "missionweaveprotocol"
EXTENSION = f"{PACKAGE}/_native.abi3.so"
REQUIRED_FILES = (EXTENSION, f"{PACKAGE}/py.typed", f"{PACKAGE}/_native.pyi", f"{PACKAGE}/__init__.py")
CONSOLE_SCRIPTS = {
    "missionweaveprotocol-server": "missionweaveprotocol.cli:server",
    "missionweaveprotocol-demo": "missionweaveprotocol.cli:demo",
    "missionweaveprotocol-conformance": "missionweaveprotocol.cli:conformance",
}
# readelf's "Machine:" text per wheel architecture.
MACHINES = {"x86_64": "Advanced Micro Devices X86-64", "aarch64": "AArch64"}
# The manylinux policy's library allow-list (PEP 599/600, auditwheel's policy.json), the
# part that applies to a Rust extension.
MANYLINUX_LIBS = {
    "libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0", "librt.so.1", "libgcc_s.so.1",
    "libutil.so.1", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1",
}


class WheelError(Exception):
    """The wheel breaks a release rule; the message names the rule."""


@dataclass
class ElfFacts:
    machine: str
    needed: list[str]
    # Symbol versions required per library, e.g. {"libc.so.6": ["GLIBC_2.2.5", ...]}.
    versions: dict[str, list[str]] = field(default_factory=dict)

    def max_glibc(self) -> tuple[int, int] | None:
        found = [
            (int(m.group(1)), int(m.group(2)))
            for names in self.versions.values()
            for name in names
            if (m := re.fullmatch(r"GLIBC_(\d+)\.(\d+)(?:\.\d+)?", name))
        ]
        return max(found) if found else None


def elf_facts(path: Path) -> ElfFacts:
    def readelf(*args: str) -> str:
        return subprocess.run(
            ["readelf", "-W", *args, str(path)], check=True, capture_output=True, text=True
        ).stdout

    header = readelf("-h")
    machine = re.search(r"Machine:\s+(.+)", header)
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", readelf("-d"))
    versions: dict[str, list[str]] = {}
    current = None
    for line in readelf("-V").splitlines():
        if file_line := re.search(r"File: (\S+)", line):
            current = file_line.group(1)
            versions[current] = []
        elif (name := re.search(r"Name: (\S+)", line)) and current is not None:
            versions[current].append(name.group(1))
    return ElfFacts(machine.group(1).strip() if machine else "?", needed, versions)


def workspace_version() -> str:
    with (ROOT / "Cargo.toml").open("rb") as manifest:
        version = tomllib.load(manifest)["workspace"]["package"]["version"]
    assert isinstance(version, str)
    return version


def check_platform_tag(tag: str, facts: ElfFacts, local: bool = False) -> list[str]:
    """The reasons `tag` does not describe the extension (empty: it does). `local`: a bare
    `linux_<arch>` tag (a wheel built from the sdist for this machine) is accepted too."""
    tag = tag.replace("manylinux2014_", "manylinux_2_17_")
    if local and (bare := re.fullmatch(r"linux_(x86_64|aarch64)", tag)):
        if facts.machine != MACHINES[bare.group(1)]:
            return [f"platform tag {tag}: the extension is built for {facts.machine}"]
        return []
    match = re.fullmatch(r"(manylinux|musllinux)_(\d+)_(\d+)_(x86_64|aarch64)", tag)
    if not match:
        return [f"platform tag {tag}: not a manylinux/musllinux tag for x86_64 or aarch64"]
    family, major, minor, arch = match.group(1), int(match.group(2)), int(match.group(3)), match.group(4)
    problems = []
    if facts.machine != MACHINES[arch]:
        problems.append(f"platform tag {tag}: the extension is built for {facts.machine}")
    newest = facts.max_glibc()
    if family == "manylinux":
        if newest is not None and newest > (major, minor):
            problems.append(
                f"platform tag {tag}: the extension needs GLIBC_{newest[0]}.{newest[1]} > {major}.{minor}"
            )
        if extra := sorted(set(facts.needed) - MANYLINUX_LIBS):
            problems.append(f"platform tag {tag}: libraries outside the manylinux policy: {extra}")
    else:
        if newest is not None:
            problems.append(f"platform tag {tag}: the extension needs glibc (GLIBC_{newest[0]}.{newest[1]})")
        musl_libc = {f"libc.musl-{arch}.so.1", "libc.so"}
        if not set(facts.needed) & musl_libc or set(facts.needed) - musl_libc - {"libgcc_s.so.1"}:
            problems.append(f"platform tag {tag}: needs {facts.needed}, not musl's libc alone")
    return problems


def check_wheel(wheel: Path, local: bool = False) -> list[str]:
    """Checks one wheel; returns the report lines. Raises WheelError with every problem."""
    name = re.fullmatch(r"(\w+)-([^-]+)-(cp\d+)-(abi3)-([\w.]+)\.whl", wheel.name)
    if not name:
        raise WheelError(f"{wheel.name}: not a cpXY-abi3 wheel file name")
    dist, version, python_tag, abi_tag, platforms = name.groups()
    problems = []
    if dist != PACKAGE:
        problems.append(f"distribution {dist}, expected {PACKAGE}")
    if version != workspace_version():
        problems.append(f"version {version}, the workspace's is {workspace_version()}")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        dist_info = f"{PACKAGE}-{version}.dist-info"
        for required in REQUIRED_FILES:
            if required not in names:
                problems.append(f"missing {required}")
        wheel_meta = archive.read(f"{dist_info}/WHEEL").decode() if f"{dist_info}/WHEEL" in names else ""
        tags = sorted(re.findall(r"^Tag: (\S+)$", wheel_meta, re.M))
        expected_tags = sorted(f"{python_tag}-{abi_tag}-{p}" for p in platforms.split("."))
        if tags != expected_tags:
            problems.append(f"WHEEL Tag lines {tags} differ from the file name's {expected_tags}")
        entry_points = archive.read(f"{dist_info}/entry_points.txt").decode() if f"{dist_info}/entry_points.txt" in names else ""
        for script, target in CONSOLE_SCRIPTS.items():
            if not re.search(rf"^{re.escape(script)}\s*=\s*{re.escape(target)}$", entry_points, re.M):
                problems.append(f"console script {script} = {target} missing")
        licences = [n for n in names if n.startswith(f"{dist_info}/licenses/")]
        if not any(b"Apache License" in archive.read(n) and b"Version 2.0" in archive.read(n) for n in licences):
            problems.append("no Apache-2.0 licence text under .dist-info/licenses/")
        metadata = archive.read(f"{dist_info}/METADATA").decode() if f"{dist_info}/METADATA" in names else ""
        if not re.search(r"^License-Expression: Apache-2\.0$", metadata, re.M):
            problems.append("METADATA has no License-Expression: Apache-2.0")
        if EXTENSION not in names:
            raise WheelError("; ".join(problems))
        with tempfile.TemporaryDirectory() as tmp:
            facts = elf_facts(Path(archive.extract(EXTENSION, tmp)))
    for platform in platforms.split("."):
        problems.extend(check_platform_tag(platform, facts, local))
    if problems:
        raise WheelError("; ".join(problems))
    newest = facts.max_glibc()
    report = [
        f"{wheel.name}: ok",
        f"  tags: {', '.join(expected_tags)}",
        f"  extension: {EXTENSION} ({facts.machine}), {len(names)} files",
        f"  needs: {', '.join(facts.needed)}",
        f"  newest glibc symbol version: {'GLIBC_%d.%d' % newest if newest else 'none (no glibc)'}",
        f"  console scripts: {', '.join(CONSOLE_SCRIPTS)}; py.typed, _native.pyi, licence present",
    ]
    return report


def main(argv: list[str]) -> int:
    local = "--local" in argv[1:]
    wheels = [arg for arg in argv[1:] if arg != "--local"]
    if not wheels:
        print(__doc__, file=sys.stderr)
        return 2
    failed = False
    for arg in wheels:
        try:
            print("\n".join(check_wheel(Path(arg), local)))
        except WheelError as error:
            print(f"{Path(arg).name}: FAILED: {error}", file=sys.stderr)
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
