#!/usr/bin/env bash
# The release archives of the two binaries, and the installer that pins them:
#
#   bash scripts/dist/archives.sh BINDIR OUTDIR VERSION
#
# writes into OUTDIR
#   mediagen-VERSION-TARGET.tar.xz        mediagen, completions/, README.md, licences
#   mediagen-mock-VERSION-TARGET.tar.xz   mediagen-mock, mock-server/README.md, licences
#   install.sh                            scripts/dist/install.sh with VERSION, TARGET
#                                         and both archives' SHA-256 filled in
# Each archive unpacks to one folder of its own name (as ripgrep's and gh's do).
# The bytes depend only on the inputs: entries sorted by name, owner 0:0, modes
# 0755 for folders and binaries and 0644 for the rest, every mtime
# SOURCE_DATE_EPOCH (default 0), single-threaded xz; two runs over the same
# binaries give identical files.
#
# The installer trusts the SHA-256 baked into it, never a SHA256SUMS beside the
# archives: someone who can replace an archive at the download address can
# replace a sums file there too, but not the install.sh a user has already
# fetched from the release page.
set -euo pipefail

# One target per release runner. Others are added by running this script on a
# runner of their own with MEDIAGEN_DIST_TARGET set, and merging the OUTDIRs:
#   aarch64-unknown-linux-gnu, x86_64-unknown-linux-musl   as here (.tar.xz);
#   aarch64-apple-darwin, x86_64-apple-darwin              as here (.tar.xz; BSD tar
#       there has no --sort/--owner: use GNU tar, `gtar` from Homebrew);
#   x86_64-pc-windows-msvc                                 a .zip (mediagen.exe, and
#       `mediagen completions powershell` as _mediagen.ps1), made reproducible by
#       touching every file to SOURCE_DATE_EPOCH and `zip -X -D` over a sorted list.
# install.sh then needs a table from `uname -s`/`uname -m` to TARGET and a
# SHA-256 per target; the Windows archive is installed by hand.
# Completions are made by running BINDIR/mediagen, so a cross-compiled BINDIR
# needs a host build's mediagen for that step (the scripts are the same).
target="${MEDIAGEN_DIST_TARGET:-x86_64-unknown-linux-gnu}"

[ $# -eq 3 ] || {
    echo "usage: bash scripts/dist/archives.sh BINDIR OUTDIR VERSION" >&2
    exit 2
}
bindir="$(cd "$1" && pwd)"
mkdir -p "$2"
out="$(cd "$2" && pwd)"
version="$3"
repo="$(cd "$(dirname "$0")/../.." && pwd)"
# The version goes into file names and, through sed, into install.sh.
[[ "${version}" =~ ^[0-9A-Za-z.+-]+$ ]] || {
    echo "archives: version '${version}' has characters other than [0-9A-Za-z.+-]" >&2
    exit 2
}
for binary in mediagen mediagen-mock; do
    [ -x "${bindir}/${binary}" ] || {
        echo "archives: no executable ${bindir}/${binary}" >&2
        exit 1
    }
done

work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT

# pack NAME: ${work}/NAME/ into OUTDIR/NAME.tar.xz, by way of a temporary name
# so an interrupted run leaves no truncated archive.
pack() {
    local name="$1"
    tar --create --file=- --directory="${work}" --format=gnu --sort=name \
        --owner=0 --group=0 --numeric-owner --mtime="@${SOURCE_DATE_EPOCH:-0}" \
        --mode='u=rwX,go=rX' "${name}" |
        xz --threads=1 -9 --check=crc64 >"${out}/${name}.tar.xz.part"
    mv "${out}/${name}.tar.xz.part" "${out}/${name}.tar.xz"
    echo "${name}.tar.xz: $(stat -c %s "${out}/${name}.tar.xz") bytes"
}

# stage NAME BINARY README: the folder every archive has.
stage() {
    local dir="${work}/$1"
    mkdir -p "${dir}"
    cp "${bindir}/$2" "${dir}/$2"
    cp "${repo}/LICENSE-MIT" "${repo}/LICENSE-APACHE" "${dir}/"
    cp "$3" "${dir}/README.md"
}

cli="mediagen-${version}-${target}"
stage "${cli}" mediagen "${repo}/README.md"
mkdir "${work}/${cli}/completions"
# The names each shell looks for: bash-completion's `mediagen`(.bash), zsh's
# `_mediagen` on $fpath, fish's `mediagen.fish` in completions/.
"${bindir}/mediagen" completions bash >"${work}/${cli}/completions/mediagen.bash"
"${bindir}/mediagen" completions zsh >"${work}/${cli}/completions/_mediagen"
"${bindir}/mediagen" completions fish >"${work}/${cli}/completions/mediagen.fish"
pack "${cli}"

mock="mediagen-mock-${version}-${target}"
stage "${mock}" mediagen-mock "${repo}/mock-server/README.md"
pack "${mock}"

sha256() { sha256sum <"$1" | cut -d' ' -f1; }
sed -e "s|@VERSION@|${version}|g" \
    -e "s|@TARGET@|${target}|g" \
    -e "s|@MEDIAGEN_SHA256@|$(sha256 "${out}/${cli}.tar.xz")|g" \
    -e "s|@MEDIAGEN_MOCK_SHA256@|$(sha256 "${out}/${mock}.tar.xz")|g" \
    "${repo}/scripts/dist/install.sh" >"${work}/install.sh"
if grep -n '@[A-Z0-9_]*@' "${work}/install.sh" >&2; then
    echo "archives: install.sh has placeholders left (above) that this script does not fill" >&2
    exit 1
fi
chmod 0755 "${work}/install.sh"
mv "${work}/install.sh" "${out}/install.sh"
echo "install.sh: pins ${cli}.tar.xz and ${mock}.tar.xz"
