"""The wheel of mediagen-mock from a binary built already: what maturin writes
for mock-server/python (`bindings = "bin"`), without compiling anything.

    python3 scripts/dist/wheel.py --binary PATH --version VERSION \\
        --platform-tag manylinux_2_17_x86_64 --out OUTDIR

writes OUTDIR/mediagen_mock-VERSION-py3-none-PLATFORM.whl and prints its path.
It holds the package from `python-source` (no __pycache__), the binary as the
script `<dist>-VERSION.data/scripts/<the crate's [[bin]]>` (mode 0755), and a
.dist-info: METADATA from pyproject.toml's [project] and its README, WHEEL,
entry_points.txt, the repository's licence files and RECORD. Entries
are sorted, the .dist-info last (PEP 427), all dated SOURCE_DATE_EPOCH (else
1980-01-01), so the same inputs give the same bytes.

The binary goes in as it is: build it stripped (the `dist` profile), as
maturin's `strip = true` would. Needs Python 3.11 or newer (tomllib).
"""

import argparse
import base64
import csv
import hashlib
import io
import os
import re
import sys
import time
import zipfile
from pathlib import Path

if sys.version_info < (3, 11):
    sys.exit("scripts/dist/wheel.py needs Python 3.11 or newer (tomllib)")
import tomllib

ROOT = Path(__file__).resolve().parents[2]
PROJECT = ROOT / "mock-server" / "python"
# The repository's licences; maturin would find none beside pyproject.toml.
LICENSES = ["LICENSE-APACHE", "LICENSE-MIT"]
# The keys of [project] that METADATA and entry_points.txt carry; any other (a
# static version, scripts, optional-dependencies, ...) stops the script rather
# than go missing from the wheel.
WRITTEN = {
    *("name", "dynamic", "description", "readme", "requires-python", "license"),
    *("classifiers", "dependencies", "urls", "entry-points"),
}
# A normalized PEP 440 public version, as pip and PyPI spell it (Cargo's
# 0.2.0-alpha.1 is 0.2.0a1 here).
PEP440 = re.compile(r"\d+(\.\d+)*((a|b|rc)\d+)?(\.post\d+)?(\.dev\d+)?")


def metadata(project: dict, version: str) -> str:
    """METADATA as maturin writes it: core metadata 2.4 (PEP 639's licence files)."""
    if unknown := sorted(set(project) - WRITTEN):
        sys.exit(f"pyproject.toml's [project] has {', '.join(unknown)}: wheel.py does not write it")
    fields = [("Metadata-Version", "2.4"), ("Name", project["name"]), ("Version", version)]
    fields += [("Classifier", c) for c in project.get("classifiers", [])]
    fields += [("Requires-Dist", d) for d in project.get("dependencies", [])]
    fields += [("License-File", name) for name in LICENSES]
    fields += [("Summary", project["description"])]
    licence = project["license"]  # PEP 639's SPDX expression, or the older {text = "..."}
    if isinstance(licence, str):
        fields += [("License-Expression", licence)]
    else:
        fields += [("License", licence["text"])]
    fields += [
        ("Requires-Python", project["requires-python"]),
        ("Description-Content-Type", "text/markdown; charset=UTF-8; variant=GFM"),
    ]
    fields += [("Project-URL", f"{label}, {url}") for label, url in project.get("urls", {}).items()]
    if not project["readme"].endswith(".md"):
        sys.exit("wheel.py writes a Markdown readme only")
    readme = (PROJECT / project["readme"]).read_text(encoding="utf-8")
    return "".join(f"{key}: {value}\n" for key, value in fields) + "\n" + readme


def entry_points(project: dict) -> str:
    return "".join(
        f"[{group}]\n" + "".join(f"{name} = {target}\n" for name, target in points.items()) + "\n"
        for group, points in project.get("entry-points", {}).items()
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", type=Path, required=True)
    parser.add_argument("--version", required=True)
    parser.add_argument("--platform-tag", required=True, help="e.g. manylinux_2_17_x86_64")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    if not PEP440.fullmatch(args.version):
        sys.exit(f"{args.version!r} is not a normalized PEP 440 version")
    binary = args.binary.read_bytes()
    if "linux" in args.platform_tag and not binary.startswith(b"\x7fELF"):
        sys.exit(f"{args.binary} is no ELF binary, for {args.platform_tag}")

    pyproject = tomllib.loads((PROJECT / "pyproject.toml").read_text(encoding="utf-8"))
    project, maturin = pyproject["project"], pyproject["tool"]["maturin"]
    cargo = tomllib.loads((PROJECT / maturin["manifest-path"]).read_text(encoding="utf-8"))
    (script,) = [b["name"] for b in cargo["bin"]]  # the crate's one binary, as maturin takes it
    dist = re.sub(r"[-_.]+", "_", project["name"]).lower()
    dist_info, data = f"{dist}-{args.version}.dist-info", f"{dist}-{args.version}.data"
    # One Tag line per platform of a compressed tag set (PEP 425).
    tags = "".join(f"Tag: py3-none-{p}\n" for p in args.platform_tag.split("."))

    module = maturin["module-name"]
    package = PROJECT / maturin["python-source"] / module.replace(".", "/")
    files: dict[str, tuple[bytes, int]] = {
        f"{module}/{path.relative_to(package).as_posix()}": (path.read_bytes(), 0o644)
        for path in package.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    }
    files[f"{data}/scripts/{script}"] = (binary, 0o755)
    files[f"{dist_info}/METADATA"] = (metadata(project, args.version).encode(), 0o644)
    files[f"{dist_info}/WHEEL"] = (
        f"Wheel-Version: 1.0\nGenerator: mediagen (scripts/dist/wheel.py)\n"
        f"Root-Is-Purelib: false\n{tags}".encode(),
        0o644,
    )
    if points := entry_points(project):
        files[f"{dist_info}/entry_points.txt"] = (points.encode(), 0o644)
    for name in LICENSES:
        files[f"{dist_info}/licenses/{name}"] = ((ROOT / name).read_bytes(), 0o644)

    names = sorted(files, key=lambda name: (name.startswith(f"{dist_info}/"), name))
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    for name in names:
        digest = base64.urlsafe_b64encode(hashlib.sha256(files[name][0]).digest()).rstrip(b"=")
        writer.writerow([name, f"sha256={digest.decode()}", len(files[name][0])])
    writer.writerow([f"{dist_info}/RECORD", "", ""])  # RECORD cannot hash itself
    files[f"{dist_info}/RECORD"] = (record.getvalue().encode(), 0o644)
    names.append(f"{dist_info}/RECORD")

    # A zip cannot date anything before 1980.
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "0"))
    stamp = max(time.gmtime(epoch)[:6], (1980, 1, 1, 0, 0, 0))
    args.out.mkdir(parents=True, exist_ok=True)
    wheel = args.out / f"{dist}-{args.version}-py3-none-{args.platform_tag}.whl"
    partial = wheel.with_name(wheel.name + ".partial")
    with zipfile.ZipFile(partial, "w") as archive:
        for name in names:
            info = zipfile.ZipInfo(name, date_time=stamp)
            info.create_system = 3  # Unix, so that installers read the mode below
            info.external_attr = (0o100000 | files[name][1]) << 16  # a regular file and its mode
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, files[name][0])
    partial.replace(wheel)
    print(wheel)


if __name__ == "__main__":
    main()
