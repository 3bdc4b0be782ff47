#!/usr/bin/env bash
# The wheel of scripts/dist.sh as a new Python user installs it: a new HOME, a
# fresh venv, a PATH of the venv's bin/, /usr/bin and /bin only (no cargo), then
# `pip install WHEEL`. Checked: `auditwheel show` finds the binary consistent
# with the wheel's platform tag (a binary that needs a newer glibc than the tag
# promises fails here); the venv's `mediagen-mock --version`; the package
# imported from the venv, finding the wheel's binary; a test of the
# `mediagen_mock` fixture; and the integrator's suite, `pytest -n 2 examples/python`.
#
# Usage: bash scripts/dist/check-wheel.sh WHEEL
# Prints `first answer: N s`: from an empty venv to the first answered request
# (pip install, the mock started by MockServer, GET /v1/account). auditwheel
# comes from PATH, else scripts/dist.sh's tools venv (MEDIAGEN_DIST_TOOLS), else
# PyPI into a venv of its own; pip reaches PyPI for pytest and
# examples/python/requirements.txt.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo="$(pwd)"

fail() {
    echo "check-wheel: FAILED: $*" >&2
    exit 1
}
step() { printf '\n--> %s\n' "$*"; }
now() { date +%s.%N; }
elapsed() { python -c 'import sys; print(f"{float(sys.argv[2]) - float(sys.argv[1]):.2f}")' "$1" "$(now)"; }

[ $# -eq 1 ] && [ -f "$1" ] || {
    echo "usage: bash scripts/dist/check-wheel.sh WHEEL" >&2
    exit 2
}
wheel="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
# {distribution}-{version}-py3-none-{platform tag}.whl (PEP 427)
IFS=- read -r dist version python_tag abi_tag platform <<<"$(basename "${wheel}" .whl)"
[ "${dist}" = mediagen_mock ] && [ "${python_tag}-${abi_tag}" = py3-none ] && [ -n "${platform}" ] ||
    fail "$(basename "${wheel}") is not named mediagen_mock-VERSION-py3-none-PLATFORM.whl"
# The interpreter to make venvs with, found before PATH is narrowed.
python3="$(python3 -c 'import sys; print(sys.executable)')"
work="$(cd "$(mktemp -d)" && pwd -P)"
trap 'rm -rf "${work}"' EXIT

step "auditwheel show $(basename "${wheel}")"
tools="${MEDIAGEN_DIST_TOOLS:-${TMPDIR:-/tmp}/mediagen-dist-tools}"
auditwheel="$(command -v auditwheel || true)"
[ -n "${auditwheel}" ] || [ ! -x "${tools}/bin/auditwheel" ] || auditwheel="${tools}/bin/auditwheel"
if [ -z "${auditwheel}" ]; then
    "${python3}" -m venv "${work}/tools"
    "${work}/tools/bin/pip" install --quiet --disable-pip-version-check auditwheel==6.8.2
    auditwheel="${work}/tools/bin/auditwheel"
fi
report="$("${auditwheel}" show "${wheel}" 2>&1)" || fail "auditwheel show: ${report}"
echo "${report}"
# auditwheel wraps its sentences; the tag it names is the oldest the binary allows.
found="$(tr -s ' \n' '  ' <<<"${report}" |
    sed -n 's/.*is consistent with the following platform tag: "\([^"]*\)".*/\1/p')"
claimed="${platform%%.*}" # the PEP 600 tag of a compressed set comes first
# A tag that promises a newer glibc than the binary needs is still true; an
# older glibc, another architecture or another libc is not.
glibc() { sed -n 's/^manylinux_\([0-9]*\)_\([0-9]*\)_.*/\1.\2/p' <<<"$1"; }
needs="$(glibc "${found}")"
promised="$(glibc "${claimed}")"
if [ "${found}" != "${claimed}" ] && { [ -z "${needs}" ] || [ -z "${promised}" ] ||
    [ "${found#manylinux_*_*_}" != "${claimed#manylinux_*_*_}" ] ||
    [ "$(printf '%s\n' "${needs}" "${promised}" | sort -V | head -1)" != "${needs}" ]; }; then
    fail "the wheel is tagged ${claimed}, but auditwheel finds it consistent with \"${found:-nothing}\" only"
fi
echo "auditwheel: consistent with ${found}; the wheel is tagged ${claimed}"

step "a new HOME, a fresh venv, PATH=venv/bin:/usr/bin:/bin"
export HOME="${work}/home"
mkdir "${HOME}"
venv="${work}/venv"
"${python3}" -m venv "${venv}"
started="$(now)"
export PATH="${venv}/bin:/usr/bin:/bin"
unset MEDIAGEN_MOCK_BIN MEDIAGEN_MOCK_URL MEDIAGEN_MOCK_ADMIN_TOKEN VIRTUAL_ENV PYTHONPATH PYTHONHOME
if command -v cargo >/dev/null; then
    fail "cargo is on PATH ($(command -v cargo)): the wheel must work without a Rust toolchain"
fi
pip=(pip --disable-pip-version-check)

step "pip install $(basename "${wheel}"), then MockServer and GET /v1/account"
"${pip[@]}" install --quiet "${wheel}"
(cd "${work}" && python - "${venv}/bin/mediagen-mock") <<'EOF' || fail "the first request through MockServer"
import sys
import urllib.request

import mediagen_mock

found = mediagen_mock.find_binary()
assert found == sys.argv[1], f"find_binary() is {found}, not the wheel's {sys.argv[1]}"
with mediagen_mock.MockServer() as mock:
    request = urllib.request.Request(
        mock.url("/v1/account"), headers={"Authorization": f"Bearer {mock.api_key}"}
    )
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(request, timeout=10) as answer:
        assert answer.status == 200, answer.status
EOF
echo "first answer: $(elapsed "${started}") s from an empty venv (pip install, MockServer started, GET /v1/account)"

step "the venv's mediagen-mock and mediagen_mock"
[ "$(command -v mediagen-mock)" = "${venv}/bin/mediagen-mock" ] ||
    fail "mediagen-mock on PATH is $(command -v mediagen-mock || echo nothing), not the venv's"
said="$(mediagen-mock --version)" || fail "mediagen-mock --version exited with $?"
[ "${said}" = "mediagen-mock ${version}" ] || fail "mediagen-mock --version says '${said}'; the wheel is ${version}"
echo "${said}"
imported="$(cd "${work}" && python -c 'import mediagen_mock as m; print(m.__version__, m.__file__)')" ||
    fail "python -c 'import mediagen_mock'"
case "${imported}" in
"${version} ${venv}/lib/"*/site-packages/mediagen_mock/__init__.py) echo "import mediagen_mock: ${imported}" ;;
*) fail "import mediagen_mock gives '${imported}', not ${version} from the venv" ;;
esac

step "pytest, pytest-xdist and examples/python/requirements.txt"
"${pip[@]}" install --quiet pytest pytest-xdist -r examples/python/requirements.txt

step "a test of the mediagen_mock fixture"
mkdir "${work}/fixture"
printf '[pytest]\n' >"${work}/fixture/pytest.ini"
cat >"${work}/fixture/test_fixture.py" <<'EOF'
import json
import urllib.request


def test_the_demo_user_reads_its_account(mediagen_mock):
    request = urllib.request.Request(
        mediagen_mock.url("/v1/account"),
        headers={"Authorization": f"Bearer {mediagen_mock.api_key}"},
    )
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(request, timeout=10) as answer:
        assert answer.status == 200
        assert json.load(answer)
EOF
(cd "${work}/fixture" && pytest -q -p no:cacheprovider test_fixture.py) || fail "the fixture's test"

step "pytest -n 2 examples/python (the integrator's suite)"
(cd "${repo}" && pytest -n 2 examples/python) || fail "pytest -n 2 examples/python"

echo
echo "check-wheel: $(basename "${wheel}") installs and works with no Rust toolchain"
