#!/usr/bin/env bash
# Each artifact scripts/dist.sh wrote, installed as a new user would: in a fresh
# environment, with a new HOME and no cargo on PATH, then used.
#
#   bash scripts/dist-check.sh OUTDIR
#
# Each check prints a line `first answer: N s`, the time from an empty venv,
# folder, container store or HOME to the first answered request.
set -euo pipefail
cd "$(dirname "$0")/.."
out="$(cd "$1" && pwd)"

step() { printf '\n==> %s\n' "$*"; }

step "SHA256SUMS matches every artifact"
(cd "${out}" && sha256sum --check --quiet SHA256SUMS)

step "the wheel, in a new venv: the command, the Python API, the pytest fixture, examples/python"
bash scripts/dist/check-wheel.sh "${out}"/mediagen_mock-*-manylinux_*.whl

step "the npm tarballs, in a new folder: nothing run at install, node --test"
bash scripts/dist/check-npm.sh "${out}"

step "the image, in an empty podman store: a service container, SIGTERM with --state"
bash scripts/dist/check-image.sh "${out}"

step "the installer, served from 127.0.0.1: both binaries installed, a tampered archive refused"
bash scripts/dist/check-installer.sh "${out}"
