#!/usr/bin/env bash
# The crates as crates.io would get them. `cargo package --workspace` writes each
# published crate's .crate file (its file list, its manifest with the workspace's
# values filled in, path dependencies turned into version requirements, in
# dependency order); then each crate is compiled from its unpacked .crate alone,
# so a file it needs but does not ship (an `include_str!` of a file outside the
# crate, a module left out by `exclude`) fails here and not on a user's machine.
#
# Why not `cargo package --workspace` with its own verification build: that build
# compiles every crate and each distinct feature set of their dependencies in full,
# about 8 minutes on this machine after the tests. `cargo check` of the unpacked
# crates proves the same about their files (every `mod`, `include_str!`,
# `include_bytes!` and dependency is resolved when checking) in far less, sharing
# the workspace's target directory.
#
# Also checked: the mock crate ships none of its Python, Node and browser-test
# folders; every crate has the metadata crates.io and docs.rs read; each version a
# README gives in a Cargo dependency line matches the crate it names.
#
# Usage: bash scripts/package-check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root="${PWD}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-${root}/target}"

step() { printf '\n--> %s\n' "$*"; }

scratch="$(mktemp -d "${TMPDIR:-/tmp}/mediagen-package-check.XXXXXX")"
trap 'rm -rf "${scratch}"' EXIT

# The published crates (publish not false), in the workspace's order, as
# "name version manifest-dir" lines; the metadata and README checks run here too.
cargo metadata --format-version 1 --no-deps >"${scratch}/metadata.json"
python3 - "${scratch}/metadata.json" >"${scratch}/crates" <<'PY'
import json
import re
import sys
from pathlib import Path

metadata = json.load(open(sys.argv[1], encoding="utf-8"))
packages = [p for p in metadata["packages"] if p["publish"] != []]
versions = {p["name"]: p["version"] for p in packages}
problems = []

for p in packages:
    for field in ("description", "license", "repository", "readme", "keywords", "categories"):
        if not p.get(field):
            problems.append(f"{p['name']}: no `{field}` in [package]")
    # docs.rs shows the crate docs; a crate with features names each of them there.
    features = sorted(f for f in p["features"] if f != "default")
    readme = Path(p["manifest_path"]).parent / (p.get("readme") or "README.md")
    text = readme.read_text(encoding="utf-8") if readme.exists() else ""
    for feature in features:
        if f"`{feature}`" not in text:
            problems.append(f"{p['name']}: {readme.name} does not document the feature `{feature}`")

# A README's dependency line, `name = "1.2"` or `name = { version = "1.2", ... }`,
# must name a version the crate has: its leading components.
dependency = re.compile(r'^([A-Za-z0-9_-]+)\s*=\s*(?:"([^"]+)"|\{[^}\n]*?version\s*=\s*"([^"]+)")', re.M)
for readme in sorted(Path(".").glob("*.md")) + sorted(Path(".").glob("*/README.md")):
    text = readme.read_text(encoding="utf-8")
    for block in re.findall(r"^```toml\n(.*?)^```", text, flags=re.M | re.S):
        for name, plain, table in dependency.findall(block):
            wanted = (plain or table).lstrip("=^~ ")
            if name in versions and not (
                versions[name] == wanted or versions[name].startswith(wanted + ".")
            ):
                problems.append(f"{readme}: {name} = \"{wanted}\", but the crate is {versions[name]}")

if problems:
    sys.exit("\n".join(problems))
for p in packages:
    print(p["name"], p["version"], Path(p["manifest_path"]).parent)
PY
echo "metadata and README versions: $(cut -d' ' -f1 "${scratch}/crates" | paste -sd' ')"

step "cargo package --workspace --no-verify"
excluded=()
while IFS= read -r name; do excluded+=(--exclude "${name}"); done < <(
    python3 -c 'import json, sys
for p in json.load(open(sys.argv[1]))["packages"]:
    if p["publish"] == []: print(p["name"])' "${scratch}/metadata.json")
cargo package --workspace "${excluded[@]}" --no-verify --allow-dirty --quiet

step "the mock crate ships no npm/, python/ or ui-tests/"
mock_version="$(awk '$1 == "mediagen-mock-server" { print $2 }' "${scratch}/crates")"
shipped="$(tar -tzf "${CARGO_TARGET_DIR}/package/mediagen-mock-server-${mock_version}.crate")"
if grep -E "^mediagen-mock-server-${mock_version}/(npm|python|ui-tests)/" <<<"${shipped}"; then
    echo "mediagen-mock-server's package holds the files above" >&2
    exit 1
fi
echo "$(wc -l <<<"${shipped}") files, none of them"

step "each crate compiles from its packaged files alone"
# A workspace of the unpacked crates, each unpublished dependency patched to its
# unpacked copy, with the workspace's lock file: the same dependency versions.
members=()
patches=()
while read -r name version _; do
    tar -xzf "${CARGO_TARGET_DIR}/package/${name}-${version}.crate" -C "${scratch}"
    members+=("\"${name}-${version}\"")
    patches+=("${name} = { path = \"${name}-${version}\" }")
done <"${scratch}/crates"
{
    echo '[workspace]'
    echo 'resolver = "3"'
    echo "members = [$(IFS=,; echo "${members[*]}")]"
    echo
    echo '[patch.crates-io]'
    printf '%s\n' "${patches[@]}"
} >"${scratch}/Cargo.toml"
cp Cargo.lock "${scratch}/Cargo.lock"
# One crate at a time, as a user builds it: its default features, and its
# dependencies' features as it alone asks for them.
while read -r name _; do
    echo "${name}"
    cargo check --quiet --locked --manifest-path "${scratch}/Cargo.toml" -p "${name}"
done <"${scratch}/crates"
echo "all compile"
