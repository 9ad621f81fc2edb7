#!/usr/bin/env bash
# One version for the release: the workspace's `[workspace.package] version` (Cargo.toml) is the
# source. The wheel takes it through maturin (python/pyproject.toml declares it dynamic); every
# package.json under js/ that declares a version (the package and its per-platform packages)
# must equal it, and so must every workspace crate (they inherit `version.workspace = true`).
#
#   scripts/check-version.sh [REPO_ROOT]     exit 0: one version; exit 1: each mismatch printed
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
python3 - "$root" <<'EOF'
import json, re, sys, tomllib
from pathlib import Path

root = Path(sys.argv[1])
with (root / "Cargo.toml").open("rb") as f:
    workspace = tomllib.load(f)
version = workspace["workspace"]["package"]["version"]
problems = []

with (root / "python/pyproject.toml").open("rb") as f:
    project = tomllib.load(f)["project"]
if "version" in project or "version" not in project.get("dynamic", []):
    problems.append("python/pyproject.toml: the version must be dynamic (maturin reads Cargo.toml)")

for member in workspace["workspace"]["members"]:
    with (root / member / "Cargo.toml").open("rb") as f:
        package = tomllib.load(f)["package"]
    if package.get("version") not in ({"workspace": True}, version):
        problems.append(f"{member}/Cargo.toml: version {package.get('version')!r}, expected the workspace's")

manifests = sorted(p for p in (root / "js").rglob("package.json") if "node_modules" not in p.parts)
for manifest in manifests:
    data = json.loads(manifest.read_text())
    rel = manifest.relative_to(root)
    if "version" in data and data["version"] != version:
        problems.append(f"{rel}: version {data['version']}, Cargo.toml says {version}")
    # Per-platform packages are pinned exactly by the main package (the napi-rs convention).
    for dep, wanted in data.get("optionalDependencies", {}).items():
        if dep.startswith("@missionweaveprotocol/") or dep.startswith("missionweaveprotocol-"):
            if wanted != version:
                problems.append(f"{rel}: optionalDependencies {dep} {wanted}, expected {version}")

lock = root / "js/package-lock.json"
if lock.exists():
    data = json.loads(lock.read_text())
    for where, found in (("version", data.get("version")),
                         ('packages[""].version', data.get("packages", {}).get("", {}).get("version"))):
        if found is not None and found != version:
            problems.append(f"js/package-lock.json: {where} {found}, expected {version}")

changelog = root / "CHANGELOG.md"
if not re.search(rf"^## \[{re.escape(version)}\]", changelog.read_text(), re.M):
    problems.append(f"CHANGELOG.md: no section '## [{version}]'")

if problems:
    print("version check failed:", *problems, sep="\n  ", file=sys.stderr)
    sys.exit(1)
print(f"version {version}: Cargo workspace ({len(workspace['workspace']['members'])} crates), "
      f"pyproject (dynamic), {len(manifests)} package.json, CHANGELOG.md")
EOF
