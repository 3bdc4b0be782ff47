#!/bin/sh
# Installs mediagen @VERSION@ (and, with --mock-server, mediagen-mock) for
# @TARGET@ from the release's archives:
#
#   curl -fsSL https://github.com/mediagen/mediagen/releases/download/v@VERSION@/install.sh | sh -s -- --mock-server
#   sh install.sh [--mock-server] [--help]
#
# Each archive's SHA-256 is written below, so this file accepts exactly the
# archives of its own release, whatever else sits at the download address.
# Nothing is unpacked before every archive is checked, and nothing is put in
# place before every binary is unpacked and has run on this machine.
#
# Needs sh, tar, xz, curl or wget, and sha256sum or `shasum -a 256`.
#
# In the repository this file is a template: scripts/dist/archives.sh fills in
# the values between at signs when it makes a release's archives.
set -eu

version='@VERSION@'
target='@TARGET@'
mediagen_sha256='@MEDIAGEN_SHA256@'
mediagen_mock_sha256='@MEDIAGEN_MOCK_SHA256@'
repository='https://github.com/mediagen/mediagen'

usage() {
    cat <<EOF
Installs mediagen ${version} (${target}), checking each archive's SHA-256.

Usage: sh install.sh [--mock-server] [--help]

  --mock-server   also install mediagen-mock, the mock server
  --help          print this help

Environment:
  MEDIAGEN_INSTALL_DIR        where the binaries go (default: \$HOME/.local/bin)
  MEDIAGEN_INSTALL_BASE_URL   where the archives are downloaded from
                              (default: ${repository}/releases/download/v${version})
EOF
}

say() { printf 'mediagen-install: %s\n' "$*"; }
fail() {
    printf 'mediagen-install: error: %s\n' "$*" >&2
    exit 1
}

# Set by main; cleanup removes the temporary folder, and the copies beside the
# final names if the script ends before renaming them.
tmp=''
staging=0
cleanup() {
    if [ "${staging}" = 1 ]; then
        for binary in ${binaries}; do
            rm -f -- "${dir}/.${binary}.install-$$"
        done
    fi
    if [ -n "${tmp}" ]; then
        rm -rf -- "${tmp}"
    fi
}

check_platform() {
    os="$(uname -s)" || fail "uname is needed and did not answer"
    arch="$(uname -m)" || fail "uname is needed and did not answer"
    build="cargo install --git ${repository} mediagen-cli"
    if [ "${with_mock}" = 1 ]; then
        build="${build}; cargo install --git ${repository} mediagen-mock-server"
    fi
    if [ "${os}" != Linux ] || [ "${arch}" != x86_64 ]; then
        fail "this release has prebuilt binaries for x86_64 Linux (${target}) only; this machine is ${os} ${arch}. Build from source with a Rust toolchain: ${build}"
    fi
    # The binaries are linked against glibc (2.17 or newer); without its loader
    # (Alpine and other musl systems) they cannot start.
    if [ ! -e /lib64/ld-linux-x86-64.so.2 ]; then
        fail "the prebuilt binaries need glibc 2.17 or newer, and this ${os} ${arch} machine has no /lib64/ld-linux-x86-64.so.2 (a musl system such as Alpine?). Build from source with a Rust toolchain: ${build}"
    fi
}

find_tools() {
    for tool in tar xz mktemp; do
        command -v "${tool}" >/dev/null 2>&1 || fail "${tool} is needed and not on PATH"
    done
    if command -v curl >/dev/null 2>&1; then
        downloader=curl
    elif command -v wget >/dev/null 2>&1; then
        downloader=wget
    else
        fail "curl or wget is needed and neither is on PATH"
    fi
    if command -v sha256sum >/dev/null 2>&1; then
        hasher=sha256sum
    elif command -v shasum >/dev/null 2>&1; then
        hasher=shasum
    else
        fail "sha256sum or shasum is needed to check the archives and neither is on PATH"
    fi
}

# download URL FILE
download() {
    if [ "${downloader}" = curl ]; then
        curl -fsSL -o "$2" "$1" || fail "could not download $1 (curl exited with $?; see above)"
    else
        # wget -q prints nothing, HTTP errors included; its exit status says which.
        wget -q -O "$2" "$1" || fail "could not download $1 (wget exited with $?: 8 is an HTTP error such as 404, 4 a network failure)"
    fi
}

# sha256 FILE: prints the file's SHA-256 in lowercase hex.
sha256() {
    if [ "${hasher}" = sha256sum ]; then
        sum="$(sha256sum <"$1")" || fail "sha256sum $1"
    else
        sum="$(shasum -a 256 <"$1")" || fail "shasum -a 256 $1"
    fi
    printf '%s\n' "${sum%% *}"
}

is_sha256() {
    case "$1" in
    *[!0-9a-f]*) return 1 ;;
    esac
    [ "${#1}" -eq 64 ]
}

main() {
    with_mock=0
    for arg in "$@"; do
        case "${arg}" in
        --mock-server) with_mock=1 ;;
        -h | --help)
            usage
            exit 0
            ;;
        *)
            usage >&2
            printf '\nmediagen-install: error: unknown argument: %s\n' "${arg}" >&2
            exit 2
            ;;
        esac
    done
    if ! is_sha256 "${mediagen_sha256}" || ! is_sha256 "${mediagen_mock_sha256}"; then
        fail "this is the installer's template; a release's install.sh, written by scripts/dist/archives.sh, has the archives' SHA-256 filled in"
    fi

    check_platform
    find_tools

    # Names without spaces, split by the `for` loops below.
    binaries=mediagen
    if [ "${with_mock}" = 1 ]; then
        binaries='mediagen mediagen-mock'
    fi
    if [ -n "${MEDIAGEN_INSTALL_DIR:-}" ]; then
        dir="${MEDIAGEN_INSTALL_DIR}"
    elif [ -n "${HOME:-}" ]; then
        dir="${HOME}/.local/bin"
    else
        fail "HOME is not set; set MEDIAGEN_INSTALL_DIR to the folder to install into"
    fi
    if [ -e "${dir}" ] && { [ ! -d "${dir}" ] || [ ! -w "${dir}" ]; }; then
        fail "cannot install into ${dir}: not a writable folder (set MEDIAGEN_INSTALL_DIR to another)"
    fi
    base="${MEDIAGEN_INSTALL_BASE_URL:-${repository}/releases/download/v${version}}"
    base="${base%/}"

    trap cleanup EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    trap 'exit 129' HUP
    tmp="$(mktemp -d)" || fail "mktemp -d could not make a temporary folder"

    # Every archive is downloaded and checked before anything is unpacked.
    for binary in ${binaries}; do
        name="${binary}-${version}-${target}"
        url="${base}/${name}.tar.xz"
        if [ "${binary}" = mediagen ]; then
            expected="${mediagen_sha256}"
        else
            expected="${mediagen_mock_sha256}"
        fi
        say "downloading ${url}"
        download "${url}" "${tmp}/${name}.tar.xz"
        actual="$(sha256 "${tmp}/${name}.tar.xz")"
        if [ "${actual}" != "${expected}" ]; then
            fail "SHA-256 mismatch for ${url}: expected ${expected}, got ${actual}. The archive is not the one released as ${version}; nothing was installed."
        fi
        say "SHA-256 ok: ${name}.tar.xz"
    done

    # xz then tar, in two steps, so a failure of either stops the script (sh
    # has no pipefail) and any tar will do, not only one that knows -J.
    for binary in ${binaries}; do
        name="${binary}-${version}-${target}"
        xz -dc <"${tmp}/${name}.tar.xz" >"${tmp}/${name}.tar" || fail "xz could not decompress ${name}.tar.xz"
        tar -xf "${tmp}/${name}.tar" -C "${tmp}" || fail "tar could not unpack ${name}.tar.xz"
        [ -f "${tmp}/${name}/${binary}" ] || fail "${name}.tar.xz has no ${name}/${binary}"
    done

    mkdir -p "${dir}" || fail "could not make ${dir}"
    dir="$(cd "${dir}" && pwd)" || fail "cannot enter ${dir}"
    # Each binary is copied beside its final name and run once there before
    # any is renamed into place: rename within a folder replaces a running or
    # older binary atomically, and a binary this machine cannot run (a glibc
    # older than 2.17) replaces nothing.
    staging=1
    for binary in ${binaries}; do
        name="${binary}-${version}-${target}"
        temporary="${dir}/.${binary}.install-$$"
        cp "${tmp}/${name}/${binary}" "${temporary}" || fail "could not write ${temporary}"
        chmod 0755 "${temporary}" || fail "could not make ${temporary} executable"
        if ! ran="$("${temporary}" --version 2>&1)"; then
            fail "${binary} does not run on this machine (it needs x86_64 Linux with glibc 2.17 or newer): ${ran}. Nothing was installed."
        fi
    done
    for binary in ${binaries}; do
        mv -f "${dir}/.${binary}.install-$$" "${dir}/${binary}" || fail "could not move ${binary} into ${dir}"
        say "installed ${dir}/${binary}"
    done
    staging=0

    said="$("${dir}/mediagen" --version)" || fail "${dir}/mediagen --version failed"
    say "${said}"
    if [ "${with_mock}" = 1 ]; then
        said="$("${dir}/mediagen-mock" --version)" || fail "${dir}/mediagen-mock --version failed"
        say "${said}"
    fi

    case ":${PATH:-}:" in
    *":${dir}:"*)
        found="$(command -v mediagen 2>/dev/null || true)"
        if [ "${found}" = "${dir}/mediagen" ]; then
            say "${dir} is on your PATH: run mediagen --help"
        else
            say "${dir} is on your PATH, but another mediagen comes before it: ${found}"
        fi
        ;;
    *)
        # Written as it goes into a profile: $HOME and $PATH are expanded there.
        shown="${dir}"
        # shellcheck disable=SC2016
        if [ -n "${HOME:-}" ] && [ "${dir}" = "${HOME}/.local/bin" ]; then
            shown='$HOME/.local/bin'
        fi
        say "${dir} is not on your PATH. To add it, put this line in your shell's profile and open a new shell:"
        # shellcheck disable=SC2016
        case "${SHELL:-}" in
        */fish) printf '\n    fish_add_path "%s"    # ~/.config/fish/config.fish\n\n' "${shown}" ;;
        */zsh) printf '\n    export PATH="%s:$PATH"    # ~/.zshrc\n\n' "${shown}" ;;
        */bash) printf '\n    export PATH="%s:$PATH"    # ~/.bashrc\n\n' "${shown}" ;;
        *) printf '\n    export PATH="%s:$PATH"    # ~/.profile\n\n' "${shown}" ;;
        esac
        ;;
    esac
    say "shell completions: mediagen completions bash|zsh|fish|elvish|powershell prints one"
}

# Everything runs from here, so a script cut short in `curl | sh` runs nothing.
main "$@"
