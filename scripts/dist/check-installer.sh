#!/usr/bin/env bash
# The installer of scripts/dist/archives.sh as a new user runs it, against a
# copy of OUTDIR served from 127.0.0.1 (MEDIAGEN_INSTALL_BASE_URL), with a new
# HOME, an environment emptied by `env -i` and a PATH of /usr/bin and /bin (no
# cargo):
#
#   bash scripts/dist/check-installer.sh OUTDIR
#
# Checked: each archive's entries; `sh install.sh --mock-server` (dash on Debian)
# puts both binaries in ~/.local/bin, runs them and says the folder is not on
# PATH; `bash --posix install.sh` into MEDIAGEN_INSTALL_DIR; the installed
# mediagen-mock answers GET /v1/account; a byte flipped in either served archive
# (and a SHA256SUMS edited to match) is refused with nothing installed; a 404 is
# a clear error; another OS or CPU is refused with the way to build from source;
# with wget and `shasum -a 256` only (no curl, no sha256sum) when wget is there.
# Prints `first answer: N s`, from the empty HOME to the mock's first answer.
set -euo pipefail
[ $# -eq 1 ] && [ -f "$1/install.sh" ] || {
    echo "usage: bash scripts/dist/check-installer.sh OUTDIR (with install.sh and the .tar.xz archives)" >&2
    exit 2
}
out="$(cd "$1" && pwd)"

# shellcheck source=common.sh
. "$(dirname "$0")/common.sh"

if grep -n '@[A-Z0-9_]*@' "${out}/install.sh" >&2; then
    fail "${out}/install.sh has placeholders (above): it is the template, not the installer archives.sh renders"
fi
# The version and target the installer pins; the archives are named by them.
version="$(sed -n "s/^version='\(.*\)'\$/\1/p" "${out}/install.sh")"
target="$(sed -n "s/^target='\(.*\)'\$/\1/p" "${out}/install.sh")"
cli="mediagen-${version}-${target}"
mock_dir="mediagen-mock-${version}-${target}"
cli_archive="${cli}.tar.xz"
mock_archive="${mock_dir}.tar.xz"
for archive in "${cli_archive}" "${mock_archive}"; do
    [ -f "${out}/${archive}" ] || fail "install.sh pins ${archive}, and ${out} has no such file"
done

# Found before PATH is narrowed: the check's own tools, not the installer's.
python3="$(command -v python3)"
work="$(cd "$(mktemp -d)" && pwd -P)"
server=""
mock=""
cleanup() {
    [ -z "${mock}" ] || kill "${mock}" 2>/dev/null || true
    [ -z "${server}" ] || kill "${server}" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "${work}"
}
trap cleanup EXIT

step "the archives: ${cli_archive}, ${mock_archive}"
entries() { tar -tJf "${out}/$1" | LC_ALL=C sort | tr '\n' ' '; }
expected="${cli}/ ${cli}/LICENSE-APACHE ${cli}/LICENSE-MIT ${cli}/README.md ${cli}/completions/ \
${cli}/completions/_mediagen ${cli}/completions/mediagen.bash ${cli}/completions/mediagen.fish ${cli}/mediagen "
[ "$(entries "${cli_archive}")" = "${expected}" ] || fail "${cli_archive} holds: $(entries "${cli_archive}")"
expected="${mock_dir}/ ${mock_dir}/LICENSE-APACHE ${mock_dir}/LICENSE-MIT ${mock_dir}/README.md ${mock_dir}/mediagen-mock "
[ "$(entries "${mock_archive}")" = "${expected}" ] || fail "${mock_archive} holds: $(entries "${mock_archive}")"
for archive in "${cli_archive}" "${mock_archive}"; do
    echo "${archive}: $(stat -c %s "${out}/${archive}") bytes"
done

step "a web root on 127.0.0.1"
root="${work}/www"
mkdir "${root}"
cp "${out}/${cli_archive}" "${out}/${mock_archive}" "${out}/install.sh" "${root}/"
# Port 0, and the port the kernel chose written to a file: http.server's own
# command line prints the address it was asked for, not the one it got.
"${python3}" -c '
import functools, http.server, sys
handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
print(server.server_address[1], flush=True)
server.serve_forever()
' "${root}" >"${work}/port" 2>"${work}/server.log" &
server=$!
for _ in $(seq 100); do
    [ -s "${work}/port" ] && break
    kill -0 "${server}" 2>/dev/null || fail "the web server exited: $(cat "${work}/server.log")"
    sleep 0.05
done
port="$(head -1 "${work}/port")"
[ -n "${port}" ] || fail "the web server did not say its port within 5 s"
base="http://127.0.0.1:${port}"
echo "serving ${root} at ${base}"

# installer SHELL... : install.sh from the web root, run by SHELL in an emptied
# environment with the HOME, PATH and MEDIAGEN_* variables of the caller's
# `home`, `path` and `extra` (an array of NAME=VALUE); output in ${work}/said.
home=""
path=/usr/bin:/bin
extra=()
args=()
installer() {
    (cd "${work}" && env -i HOME="${home}" PATH="${path}" MEDIAGEN_INSTALL_BASE_URL="${base}" "${extra[@]}" \
        "$@" "${root}/install.sh" "${args[@]}") >"${work}/said" 2>&1
}
said() { cat "${work}/said"; }
# Runs the installer under sh, which must refuse; prints what it said either way.
refused() {
    if installer sh; then
        said
        fail "$1"
    fi
    said
}

step "sh install.sh --mock-server, with a new HOME and PATH=/usr/bin:/bin"
home="${work}/home"
mkdir "${home}"
started="$(now)"
if PATH="${path}" command -v cargo >/dev/null; then
    fail "cargo is on PATH=${path} ($(PATH="${path}" command -v cargo)): the installer must need no Rust toolchain"
fi
args=(--mock-server)
installer sh || {
    code=$?
    said
    fail "sh install.sh --mock-server exited with ${code}"
}
said
bin="${home}/.local/bin"
for binary in mediagen mediagen-mock; do
    [ -x "${bin}/${binary}" ] || fail "no executable ${bin}/${binary}"
    answer="$("${bin}/${binary}" --version)" || fail "${bin}/${binary} --version"
    [ "${answer}" = "${binary} ${version}" ] || fail "${binary} --version says '${answer}', not ${version}"
done
grep -qF "${bin} is not on your PATH" "${work}/said" || fail "the installer did not say that ${bin} is not on PATH"
grep -qF 'export PATH="$HOME/.local/bin:$PATH"' "${work}/said" || fail "the installer did not give the line for the profile"
others="$(find "${bin}" -mindepth 1 ! -name mediagen ! -name mediagen-mock)"
[ -z "${others}" ] || fail "${bin} has more than the two binaries: ${others}"

step "the installed mediagen-mock's first answer"
(cd "${work}" && env -i HOME="${home}" PATH="${path}" "${bin}/mediagen-mock" --listen 127.0.0.1:0) \
    >"${work}/mock.out" 2>"${work}/mock.err" &
mock=$!
for _ in $(seq 200); do
    [ "$(wc -l <"${work}/mock.out")" -ge 2 ] && break
    kill -0 "${mock}" 2>/dev/null || fail "mediagen-mock exited: $(cat "${work}/mock.err")"
    sleep 0.05
done
address="$(sed -n '1s/^mediagen-mock listening on //p' "${work}/mock.out")"
key="$(sed -n '2s/^demo API key: //p' "${work}/mock.out")"
[ -n "${address}" ] && [ -n "${key}" ] ||
    fail "mediagen-mock's first lines are not its address and demo key: $(cat "${work}/mock.out" "${work}/mock.err")"
status="$(curl -sS --noproxy '*' -o /dev/null -w '%{http_code}' -H "Authorization: Bearer ${key}" "${address}/v1/account")"
[ "${status}" = 200 ] || fail "GET ${address}/v1/account answered ${status}, not 200"
echo "first answer: $(elapsed "${started}") s from an empty HOME (sh install.sh --mock-server, mediagen-mock started, GET /v1/account)"
kill "${mock}"
wait "${mock}" 2>/dev/null || true
mock=""

step "bash --posix install.sh into MEDIAGEN_INSTALL_DIR, a folder on PATH"
elsewhere="${work}/opt/mediagen/bin"
path="/usr/bin:/bin:${elsewhere}"
extra=(MEDIAGEN_INSTALL_DIR="${elsewhere}" SHELL=/bin/bash)
args=()
installer bash --posix || {
    code=$?
    said
    fail "bash --posix install.sh exited with ${code}"
}
said
[ "$("${elsewhere}/mediagen" --version)" = "mediagen ${version}" ] || fail "${elsewhere}/mediagen --version"
[ ! -e "${elsewhere}/mediagen-mock" ] || fail "mediagen-mock was installed without --mock-server"
grep -qF "${elsewhere} is on your PATH" "${work}/said" || fail "the installer did not say that ${elsewhere} is on PATH"
path=/usr/bin:/bin
extra=()

step "another machine: uname says Darwin arm64"
fake="${work}/fake-uname"
mkdir "${fake}"
printf '#!/bin/sh\ncase "$1" in -s) echo Darwin ;; -m) echo arm64 ;; esac\n' >"${fake}/uname"
chmod +x "${fake}/uname"
path="${fake}:/usr/bin:/bin"
extra=(MEDIAGEN_INSTALL_DIR="${work}/darwin")
args=(--mock-server)
refused "the installer went on on Darwin arm64"
grep -qF "this machine is Darwin arm64" "${work}/said" || fail "the refusal does not name what it found"
grep -qF "cargo install --git https://github.com/mediagen/mediagen mediagen-cli" "${work}/said" ||
    fail "the refusal does not say how to build from source"
[ ! -e "${work}/darwin" ] || fail "the refused install made ${work}/darwin"
path=/usr/bin:/bin

# tampered ARCHIVE: a byte flipped in the served ARCHIVE, and a SHA256SUMS that
# matches the tampered bytes beside it; the installer must refuse both binaries.
tampered() {
    local archive="$1" into="${work}/tampered-$1"
    "${python3}" -c '
import sys
path = sys.argv[1]
data = bytearray(open(path, "rb").read())
data[len(data) // 2] ^= 0xFF
open(path, "wb").write(data)
' "${root}/${archive}"
    (cd "${root}" && sha256sum -- *.tar.xz install.sh >SHA256SUMS)
    extra=(MEDIAGEN_INSTALL_DIR="${into}")
    args=(--mock-server)
    refused "the installer accepted a tampered ${archive}"
    grep -qF "SHA-256 mismatch for ${base}/${archive}" "${work}/said" ||
        fail "the refusal of the tampered ${archive} does not name the checksum and its URL"
    grep -qF "expected $(sha256sum <"${out}/${archive}" | cut -d' ' -f1), got $(sha256sum <"${root}/${archive}" | cut -d' ' -f1)" \
        "${work}/said" || fail "the refusal does not say the expected and the actual SHA-256"
    for binary in mediagen mediagen-mock; do
        [ ! -e "${into}/${binary}" ] || fail "${binary} was installed from a release with a tampered ${archive}"
    done
    [ ! -e "${into}" ] || [ -z "$(ls -A "${into}")" ] || fail "${into} is not empty: $(ls -A "${into}")"
    cp "${out}/${archive}" "${root}/${archive}"
    rm "${root}/SHA256SUMS"
    extra=()
}
step "a byte flipped in the served ${cli_archive}"
tampered "${cli_archive}"
step "a byte flipped in the served ${mock_archive}: mediagen, checked first, is not installed either"
tampered "${mock_archive}"

step "an archive missing at the download address"
extra=(MEDIAGEN_INSTALL_DIR="${work}/missing" MEDIAGEN_INSTALL_BASE_URL="${base}/no-such-release")
args=()
refused "the installer succeeded with nothing to download"
grep -qF "could not download ${base}/no-such-release/${cli_archive}" "${work}/said" ||
    fail "a 404 is not a clear download error"
[ ! -e "${work}/missing" ] || fail "a failed download made ${work}/missing"
extra=()

step "wget and shasum only: a PATH with neither curl nor sha256sum, replacing the installed binaries"
if ! command -v wget >/dev/null; then
    echo "wget is not installed here: the wget path is not checked"
else
    hasher=shasum
    command -v shasum >/dev/null || hasher=sha256sum
    tools="${work}/tools"
    mkdir "${tools}"
    # What install.sh needs, and nothing else.
    for tool in sh tar xz wget "${hasher}" mktemp uname mkdir rm cp chmod mv cat; do
        ln -s "$(command -v "${tool}")" "${tools}/${tool}"
    done
    path="${tools}"
    args=(--mock-server)
    before="$(stat -c %i "${bin}/mediagen")"
    installer sh || {
        code=$?
        said
        fail "sh install.sh with wget and ${hasher} only exited with ${code}"
    }
    said
    [ "$(stat -c %i "${bin}/mediagen")" != "${before}" ] || fail "${bin}/mediagen was not replaced"
    [ "$("${bin}/mediagen-mock" --version)" = "mediagen-mock ${version}" ] || fail "${bin}/mediagen-mock --version"
    others="$(find "${bin}" -mindepth 1 ! -name mediagen ! -name mediagen-mock)"
    [ -z "${others}" ] || fail "${bin} has more than the two binaries after a reinstall: ${others}"
    path=/usr/bin:/bin
fi

echo
echo "check-installer: install.sh ${version} installs both binaries with sh, tar, xz and curl or wget, and refuses tampered archives"
