#!/usr/bin/env bash
# The README examples of the SDK, built as a new project would build them: one scratch
# crate per README with exactly the `[dependencies]` that README documents (the SDK by
# path, at the README's version), none of the workspace's dev-dependencies. Hidden `# `
# lines are dropped, since a reader does not see them (they only start a mock and set
# MEDIAGEN_BASE_URL and MEDIAGEN_API_KEY for the doc-tests); what is left must be a
# whole program. `cargo check` shares the workspace's target dir, so it costs seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
root="${PWD}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-${root}/target}"
scratch="$(mktemp -d "${TMPDIR:-/tmp}/mediagen-readme-deps.XXXXXX")"
trap 'rm -rf "${scratch}"' EXIT

readmes=("$@")
[ "${#readmes[@]}" -gt 0 ] || readmes=(sdk/README.md README.md)

for readme in "${readmes[@]}"; do
    crate="${scratch}/$(echo "${readme}" | tr '/.' '__')"
    python3 - "${readme}" "${crate}" "${root}" <<'PY'
import os, re, sys

readme, crate, root = sys.argv[1:]
text = open(os.path.join(root, readme), encoding="utf-8").read()
blocks = re.findall(r"^```([^\n]*)\n(.*?)^```", text, flags=re.M | re.S)

def fail(message):
    sys.exit(f"{readme}: {message}")

deps = [body for info, body in blocks if info.strip() == "toml" and "[dependencies]" in body]
if len(deps) != 1:
    fail(f"needs one ```toml block with [dependencies], found {len(deps)}")
deps = deps[0]
version = re.search(r'^mediagen\s*=\s*"([^"]+)"', deps, flags=re.M)
if not version:
    fail('its [dependencies] block must name the SDK as mediagen = "VERSION"')
sdk = os.path.join(root, "sdk").replace("\\", "/")
deps = deps.replace(version.group(0), f'mediagen = {{ path = "{sdk}", version = "{version.group(1)}" }}')

def visible(body):
    # rustdoc hides `# ` lines and a lone `#`; `#[attr]` stays.
    return "\n".join(line for line in body.splitlines()
                     if not re.match(r"^\s*#(\s|$)", line))

programs = []
for info, body in blocks:
    tags = {tag.strip() for tag in info.split(",")}
    if "rust" not in tags or tags & {"ignore", "compile_fail"}:
        continue
    code = visible(body)
    # The SDK's examples; those of the mock server and webhook-verify have crates of their own.
    if not re.search(r"\bmediagen::", code):
        continue
    if not re.search(r"\bfn main\b", code):
        fail(f"an example is not a whole program (no visible fn main):\n{code}")
    programs.append(code)
if not programs:
    fail("has no example of the SDK to check")

os.makedirs(os.path.join(crate, "src", "bin"))
with open(os.path.join(crate, "Cargo.toml"), "w") as manifest:
    manifest.write('[package]\nname = "readme-example"\nversion = "0.0.0"\nedition = "2024"\npublish = false\n\n')
    manifest.write("[workspace]\n\n")
    manifest.write(deps)
for number, code in enumerate(programs, start=1):
    with open(os.path.join(crate, "src", "bin", f"example_{number}.rs"), "w") as source:
        # Examples bind values to show them: unused ones are no fault here.
        source.write("#![allow(unused)]\n" + code + "\n")
print(f"{readme}: {len(programs)} example(s), dependencies as documented")
PY
    # The workspace's lock: the same versions as the SDK is tested with, and no download.
    cp Cargo.lock "${crate}/Cargo.lock"
    cargo check --quiet --bins --manifest-path "${crate}/Cargo.toml"
done
