#!/usr/bin/env bash
# The contract in generators other than the SDK's: openapi-python-client (a Python
# client) and openapi-typescript (TypeScript types) must read openapi/openapi.json
# without an error or a warning, and keep every operation and every schema.
#
# Usage: bash scripts/generators-check.sh [CONTRACT]   (default openapi/openapi.json)
# The tools are installed once under ${TMPDIR:-/tmp}/mediagen-generators-check.
set -euo pipefail
cd "$(dirname "$0")/.."

contract="${1:-openapi/openapi.json}"
work="${TMPDIR:-/tmp}/mediagen-generators-check"
venv="${work}/venv"
npm_dir="${work}/npm"
out="${work}/out"
# One pin for the Python generator, shared with the example suite.
python_generator="$(grep -E '^openapi-python-client==' examples/python/requirements.txt)"
typescript_generator="openapi-typescript@7.13.0"
typescript="typescript@5.9.3"

step() { printf '\n--> %s\n' "$*"; }

if [ ! -f "${venv}/.installed-${python_generator}" ]; then
    step "installing ${python_generator}"
    rm -rf "${venv}"
    python3 -m venv "${venv}"
    "${venv}/bin/pip" install --quiet --disable-pip-version-check "${python_generator}"
    touch "${venv}/.installed-${python_generator}"
fi
if [ ! -f "${npm_dir}/.installed-${typescript_generator}-${typescript}" ]; then
    step "installing ${typescript_generator} and ${typescript}"
    rm -rf "${npm_dir}"
    mkdir -p "${npm_dir}"
    npm install --prefix "${npm_dir}" --no-save --no-audit --no-fund --loglevel=error \
        "${typescript_generator}" "${typescript}"
    touch "${npm_dir}/.installed-${typescript_generator}-${typescript}"
fi
rm -rf "${out}"
mkdir -p "${out}/python" "${out}/typescript"

step "openapi-python-client (warnings are errors)"
"${venv}/bin/openapi-python-client" generate \
    --path "${contract}" \
    --config openapi/openapi-python-client.yaml \
    --output-path "${out}/python/mediagen_client" \
    --meta none \
    --fail-on-warning

step "openapi-typescript"
log="${out}/typescript/log"
if ! "${npm_dir}/node_modules/.bin/openapi-typescript" "${contract}" \
    -o "${out}/typescript/schema.d.ts" >"${log}" 2>&1; then
    cat "${log}" >&2
    echo "openapi-typescript failed" >&2
    exit 1
fi
cat "${log}"
# It goes on after a warning, and a warning can mean a part left out.
if grep -Eiq 'warn|error|⚠' "${log}"; then
    echo "openapi-typescript printed a warning or an error (above)" >&2
    exit 1
fi

step "every operation and schema is in both outputs"
"${venv}/bin/python" - "${contract}" "${out}" <<'PY'
import importlib
import json
import pkgutil
import sys
from pathlib import Path

contract, out = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8")), Path(sys.argv[2])
methods = {"get", "put", "post", "delete", "patch", "head", "options", "trace"}
operations = sorted(
    op["operationId"]
    for item in contract["paths"].values()
    for method, op in item.items()
    if method in methods
)
webhooks = sorted(
    op["operationId"]
    for item in contract.get("webhooks", {}).values()
    for method, op in item.items()
    if method in methods
)
schemas = sorted(contract["components"]["schemas"])

# Python: a module per operation under api/<tag>/, a class per schema in models.
sys.path.insert(0, str(out / "python"))
client = importlib.import_module("mediagen_client")
api = importlib.import_module("mediagen_client.api")
modules = {
    name.rsplit(".", 1)[-1]
    for _, name, is_pkg in pkgutil.walk_packages(api.__path__, "mediagen_client.api.")
    if not is_pkg
}
models = importlib.import_module("mediagen_client.models")
missing = [f"operation {op}" for op in operations if op not in modules]
missing += [f"schema {s}" for s in schemas if not hasattr(models, s)]
if missing:
    sys.exit("openapi-python-client left out: " + ", ".join(missing))
for _, name, is_pkg in pkgutil.walk_packages(api.__path__, "mediagen_client.api."):
    importlib.import_module(name)  # every generated module imports
print(f"python: {len(operations)} operations, {len(schemas)} schemas, {client.__name__} imports")

# TypeScript: the compiler checks that each name is a key of the generated types.
check = out / "typescript" / "coverage.ts"
check.write_text(
    'import type { components, operations } from "./schema";\n'
    f"export const operationIds: Array<keyof operations> = {json.dumps(operations + webhooks)};\n"
    f'export const schemaNames: Array<keyof components["schemas"]> = {json.dumps(schemas)};\n',
    encoding="utf-8",
)
print(f"typescript: {len(operations) + len(webhooks)} operations, {len(schemas)} schemas to check")
PY
"${npm_dir}/node_modules/.bin/tsc" --noEmit --strict --skipLibCheck false \
    "${out}/typescript/schema.d.ts" "${out}/typescript/coverage.ts"
echo "typescript: schema.d.ts compiles and has them all"
