#!/usr/bin/env bash
# Time from nothing (an empty venv, folder, container store or HOME) to the
# first answered request, for each artifact of scripts/dist.sh, beside the
# installs from source in the same run (each with a cold cargo target dir, as a
# new user's machine has), and the size of every artifact. Writes the section
# "## Install: from nothing to the first answer" of BENCHMARKS.md
# (scripts/bench.sh keeps it as it stands).
#
#   bash scripts/bench-install.sh OUTDIR    # OUTDIR from scripts/dist.sh; about 15 minutes
#
# MEDIAGEN_BENCH_SOURCES chooses the source installs (default "pip npm cargo");
# each compiles the same crate with the same profile from nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="${PWD}"
out="$(cd "$1" && pwd)"
logs="$(mktemp -d)"
trap 'rm -rf "${logs}"' EXIT

# `first answer: N s` of a check's output.
first_answer() { sed -n 's/^first answer: \([0-9.]*\) s.*/\1/p' "$1" | head -1; }

echo "== prebuilt: the checks of scripts/dist-check.sh" >&2
bash scripts/dist/check-wheel.sh "${out}"/mediagen_mock-*.whl >"${logs}/wheel" 2>&1
bash scripts/dist/check-npm.sh "${out}" >"${logs}/npm" 2>&1
bash scripts/dist/check-image.sh "${out}" >"${logs}/image" 2>&1
bash scripts/dist/check-installer.sh "${out}" >"${logs}/installer" 2>&1

# From source: a fresh venv, folder or cargo root, and a cold target dir each;
# then the mock started and asked once.
answer_from() {
    local binary="$1" line base key
    exec 3< <("${binary}" --listen 127.0.0.1:0)
    local pid=$!
    read -r line <&3
    base="${line##* }"
    read -r line <&3
    key="${line##* }"
    curl -fsS -o /dev/null -H "Authorization: Bearer ${key}" "${base}/v1/account"
    kill "${pid}"
    exec 3<&-
}
source_install() {
    local name="$1" work="${logs}/${1}-work"
    mkdir -p "${work}"
    local started=${SECONDS}
    case "${name}" in
    pip)
        python3 -m venv "${work}/venv"
        CARGO_TARGET_DIR="${work}/target" "${work}/venv/bin/pip" install --quiet ./mock-server/python
        answer_from "${work}/venv/bin/mediagen-mock"
        ;;
    npm)
        (cd "${work}" && npm init -y >/dev/null &&
            CARGO_TARGET_DIR="${work}/target" npm install --no-audit --no-fund --loglevel=error "${repo}/mock-server/npm")
        answer_from "${work}/node_modules/.bin/mediagen-mock"
        ;;
    cargo)
        CARGO_TARGET_DIR="${work}/target" cargo install --quiet --root "${work}/root" --path mock-server
        answer_from "${work}/root/bin/mediagen-mock"
        ;;
    esac
    echo $((SECONDS - started))
}
echo "== from source: pip, npm and cargo install, each from a cold target dir" >&2
pip_source="not run" npm_source="not run" cargo_source="not run"
for route in ${MEDIAGEN_BENCH_SOURCES:-pip npm cargo}; do
    printf -v "${route}_source" '%s' "$(source_install "${route}")"
done

size() { du -h --apparent-size "$@" | cut -f1; }
python3 - BENCHMARKS.md <<PY
import pathlib, sys
out = pathlib.Path(sys.argv[1])
heading = "## Install: from nothing to the first answer"
rows = [
    ("wheel", "pip install of \`$(basename "${out}"/mediagen_mock-*.whl)\` into an empty venv", "$(first_answer "${logs}/wheel")", "$(size "${out}"/mediagen_mock-*.whl)"),
    ("npm", "npm install of the two tarballs into an empty folder", "$(first_answer "${logs}/npm")", "$(size "${out}"/mediagen-mock-linux-x64-gnu-*.tgz) + $(size "${out}"/mediagen-mock-[0-9]*.tgz)"),
    ("image", "podman load and run, an empty store, to /health", "$(first_answer "${logs}/image")", "$(size "${out}"/mediagen-mock-*.oci.tar)"),
    ("installer", "sh install.sh --mock-server, a new HOME, from 127.0.0.1", "$(first_answer "${logs}/installer")", "$(size "${out}"/mediagen-[0-9]*.tar.xz) + $(size "${out}"/mediagen-mock-[0-9]*.tar.xz)"),
    ("pip, from source", "pip install ./mock-server/python, a cold cargo target dir", "${pip_source}", ""),
    ("npm, from source", "npm install ./mock-server/npm, a cold cargo target dir", "${npm_source}", ""),
    ("cargo install", "cargo install --path mock-server, a cold cargo target dir", "${cargo_source}", ""),
]
section = [
    heading,
    "",
    "\`bash scripts/bench-install.sh OUTDIR\` after \`bash scripts/dist.sh OUTDIR\`, on $(nproc) cores:"
    " seconds from nothing to the mock's first answered request (one run each; a source"
    " install compiles, so its figure is minutes).",
    "",
    "| route | from | first answer (s) | size |",
    "|---|---|---|---|",
    *[f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows],
    "",
]
text = out.read_text() if out.exists() else "# Benchmarks\n"
text = text.split(heading, 1)[0].rstrip("\n") + "\n\n" + "\n".join(section)
out.write_text(text)
print("\n".join(section))
PY
