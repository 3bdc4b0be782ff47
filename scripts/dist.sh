#!/usr/bin/env bash
# Every artifact of the workspace's version, for x86_64 Linux, from one
# compilation of the two binaries:
#
#   bash scripts/dist.sh OUTDIR
#
# writes into OUTDIR (names fixed; tools and docs rely on them):
#   mediagen_mock-VERSION-py3-none-manylinux_2_17_x86_64.whl   pip
#   mediagen-mock-VERSION.tgz, mediagen-mock-linux-x64-gnu-VERSION.tgz   npm
#   mediagen-mock-VERSION.oci.tar                  podman load / docker load
#   mediagen-VERSION-x86_64-unknown-linux-gnu.tar.xz,
#   mediagen-mock-VERSION-x86_64-unknown-linux-gnu.tar.xz, install.sh
#   SHA256SUMS
# and checks nothing beyond the glibc the binaries need: scripts/dist-check.sh
# installs each artifact as a user would.
#
# The binaries are built once, with the `dist` profile (stripped, fat LTO), by
# cargo-zigbuild against glibc 2.17 (manylinux2014: Debian 8, RHEL 7, Ubuntu
# 14.04 and newer), in the workspace's target dir, so a second run only checks
# they are fresh. zig and cargo-zigbuild come from PyPI into a tools venv
# (MEDIAGEN_DIST_TOOLS, default $TMPDIR/mediagen-dist-tools); podman builds
# the image.
#
# Other platforms are built the same way on a release runner of their own:
# TARGET=aarch64-unknown-linux-gnu.2.17 on an arm64 runner (wheel tag
# manylinux_2_17_aarch64, npm package mediagen-mock-linux-arm64-gnu, image
# linux/arm64), x86_64-unknown-linux-musl for a static build
# (mediagen-mock-linux-x64-musl), and plain `cargo build --profile dist` on
# macOS and Windows runners (darwin-arm64, darwin-x64, win32-x64-msvc; archives
# as .tar.xz and .zip). Each runner's OUTDIR is then merged into one release.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 1 ] || {
    echo "usage: bash scripts/dist.sh OUTDIR" >&2
    exit 2
}
mkdir -p "$1"
out="$(cd "$1" && pwd)"
glibc="2.17"
target="x86_64-unknown-linux-gnu"
wheel_tag="manylinux_${glibc/./_}_x86_64"
# Every file's time in the wheel, the tarballs, the image and the archives: the
# last commit's, so the same commit gives the same bytes.
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}"

step() { printf '\n--> %s\n' "$*"; }

command -v podman >/dev/null || {
    echo "podman builds the image: apt-get install podman runc (or set up podman otherwise)" >&2
    exit 1
}

tools="${MEDIAGEN_DIST_TOOLS:-${TMPDIR:-/tmp}/mediagen-dist-tools}"
step "build tools in ${tools}: zig, cargo-zigbuild, auditwheel (PyPI)"
[ -x "${tools}/bin/cargo-zigbuild" ] || {
    python3 -m venv "${tools}"
    "${tools}/bin/pip" install --quiet --disable-pip-version-check \
        ziglang==0.17.1 cargo-zigbuild==0.24.1 auditwheel==6.8.2
}
export PATH="${tools}/bin:${PATH}"

version="$(cargo metadata --no-deps --format-version 1 |
    python3 -c 'import json, sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "mediagen-mock-server"))')"
step "mediagen ${version}: mediagen and mediagen-mock, profile dist, ${target} with glibc ${glibc}"
started=${SECONDS}
cargo zigbuild --profile dist --target "${target}.${glibc}" \
    -p mediagen-cli -p mediagen-mock-server --bin mediagen --bin mediagen-mock
echo "built in $((SECONDS - started)) s"
bin="${CARGO_TARGET_DIR:-target}/${target}/dist"

# The wheel's tag and the installer's promise hold only if no symbol needs a
# newer glibc than the one built against.
for binary in mediagen mediagen-mock; do
    newest="$(objdump -T "${bin}/${binary}" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)"
    if [ "$(printf '%s\n' "GLIBC_${glibc}" "${newest}" | sort -V | tail -1)" != "GLIBC_${glibc}" ]; then
        echo "${binary} needs ${newest}, newer than glibc ${glibc}" >&2
        exit 1
    fi
    echo "${binary}: $(stat -c %s "${bin}/${binary}") bytes, newest symbol ${newest}"
done

rm -f "${out}"/*.whl "${out}"/*.tgz "${out}"/*.oci.tar "${out}"/*.tar.xz "${out}/install.sh" "${out}/SHA256SUMS"

step "the wheel"
python3 scripts/dist/wheel.py --binary "${bin}/mediagen-mock" --version "${version}" \
    --platform-tag "${wheel_tag}" --out "${out}"

step "the npm packages"
node mock-server/npm/scripts/dist.js --binary "${bin}/mediagen-mock" --out "${out}"

step "the image"
bash scripts/dist/image.sh "${bin}/mediagen-mock" "${out}" "${version}"

step "the archives and the installer"
bash scripts/dist/archives.sh "${bin}" "${out}" "${version}"

step "SHA256SUMS"
(cd "${out}" && sha256sum -- *.whl *.tgz *.oci.tar *.tar.xz install.sh >SHA256SUMS && ls -l)
