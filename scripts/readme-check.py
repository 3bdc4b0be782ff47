#!/usr/bin/env python3
"""The READMEs' Rust examples, checked as a reader sees and copies them.

1. Every Rust block of every README is what a reader writes: no hidden rustdoc lines
   (`# ...`), and either a whole program (a visible `fn main`) or items only.
2. A README whose ```toml `[dependencies]` name a crate of this workspace gets a scratch
   crate with exactly those dependencies (the workspace's crates by path, in place of the
   git source the README gives, which must be the workspace's `repository`), none of the
   workspace's dev-dependencies. Every block that uses one of those crates is compiled
   into it, as a module of one binary per README.
3. Each of those programs runs in a fresh folder against a world of its own on a
   `mediagen-mock` started here (MEDIAGEN_BASE_URL and MEDIAGEN_API_KEY set to the
   world's), and must exit 0. What a program needs beyond that comes from HTML comments
   right before its block, invisible where the README is read:

       <!-- readme-check: world {"clock": "manual"} -->         the world's settings
       <!-- readme-check: PUT /_mock/dns {"host": "…"} -->      a control call on the world
       <!-- readme-check: file cat.png -->                      a file in the folder (a PNG)
       <!-- readme-check: creates out/*.png -->                 a file the program must make

The blocks of crates documented with `#![doc = include_str!("../README.md")]` are also
rustdoc's doc-tests: those that need the service are `no_run` there (compiled, not run),
and run here.

Usage: python3 scripts/readme-check.py [README ...]   (default: every README in git)
"""

import json
import os
import re
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import tomllib
import urllib.error
import urllib.request
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
# Each world's clock, unless a block's `world` says otherwise: 200 times real time, so
# that a generation ends in tens of milliseconds.
WORLD = {"clock": "real", "timeScale": 200}
RUN_SECONDS = 120
DIRECTIVE = re.compile(r"^\s*<!--\s*readme-check:\s*(.*?)\s*-->\s*$")
HIDDEN = re.compile(r"^\s*#(\s|$)")  # rustdoc hides `# ` and a lone `#`; `#[attr]` stays
MAIN = re.compile(r"^((?:async\s+)?fn\s+main\s*\()", re.M)
# What may start a top-level line of a block that is items only.
ITEM = re.compile(
    r"^(use|pub|fn|async|const|static|struct|enum|impl|trait|type|mod|extern|unsafe|macro_rules!|#\[|//|/\*|\*|\}|\)|$)"
)


class Failure(Exception):
    pass


class Block:
    def __init__(self, readme, line, info, code, directives):
        self.readme, self.line, self.code, self.directives = readme, line, code, directives
        self.tags = {tag.strip() for tag in info.split(",") if tag.strip()}

    @property
    def where(self):
        return f"{self.readme}:{self.line}"

    @property
    def is_rust(self):
        # rustdoc reads a fence without a language as Rust too.
        return not self.tags or "rust" in self.tags

    @property
    def is_program(self):
        return bool(MAIN.search(self.code))


def blocks_of(readme):
    lines = (ROOT / readme).read_text(encoding="utf-8").splitlines()
    blocks, n = [], 0
    while n < len(lines):
        opening = re.match(r"^(\s*)(```+|~~~+)([^`]*)$", lines[n])
        if not opening:
            n += 1
            continue
        indent, fence, info = opening.groups()
        directives, back = [], n - 1
        while back >= 0 and (not lines[back].strip() or DIRECTIVE.match(lines[back])):
            if lines[back].strip():
                directives.insert(0, DIRECTIVE.match(lines[back]).group(1))
            back -= 1
        body, n = [], n + 1
        while n < len(lines) and not re.match(rf"^\s*{fence[0]}{{{len(fence)},}}\s*$", lines[n]):
            body.append(lines[n][len(indent):] if lines[n].startswith(indent) else lines[n])
            n += 1
        blocks.append(Block(readme, n - len(body), info.strip(), "\n".join(body) + "\n", directives))
        n += 1
    return blocks


def lint(block):
    """What a reader sees is what compiles: no hidden lines, no bare statements."""
    hidden = [line for line in block.code.splitlines() if HIDDEN.match(line)]
    if hidden:
        raise Failure(f"{block.where}: hidden rustdoc lines, which every Markdown viewer shows:\n"
                      + "\n".join(hidden))
    if not block.is_program:
        loose = [line for line in block.code.splitlines()
                 if line and not line[0].isspace() and not ITEM.match(line)]
        if loose:
            raise Failure(f"{block.where}: neither a whole program (no fn main) nor items only:\n"
                          + "\n".join(loose))


def workspace():
    manifest = tomllib.loads((ROOT / "Cargo.toml").read_text(encoding="utf-8"))["workspace"]
    crates = {name: ROOT / spec["path"]
              for name, spec in manifest["dependencies"].items()
              if isinstance(spec, dict) and "path" in spec}
    return crates, manifest["package"]["repository"]


def check_sources(blocks, crates, repository):
    """A crate of this workspace is not on crates.io yet: every README takes it from git."""
    for block in blocks:
        if block.tags != {"toml"}:
            continue
        try:
            manifest = tomllib.loads(block.code)
        except tomllib.TOMLDecodeError:
            continue  # a config file's fragment, not a manifest
        for table in ("dependencies", "dev-dependencies", "build-dependencies"):
            for name, spec in manifest.get(table, {}).items():
                if name in crates and (not isinstance(spec, dict) or spec.get("git") != repository
                                       or "path" in spec or "version" in spec):
                    raise Failure(f"{block.where}: until it is published, {name} comes from "
                                  f'git = "{repository}" (found {spec})')


def documented_dependencies(blocks, crates):
    """The README's [dependencies], merged over its ```toml blocks; None if it names none
    of the workspace's crates."""
    merged = {}
    for block in blocks:
        if block.tags != {"toml"} or "[dependencies]" not in block.code:
            continue
        try:
            deps = tomllib.loads(block.code).get("dependencies", {})
        except tomllib.TOMLDecodeError as error:
            raise Failure(f"{block.where}: not TOML: {error}")
        for name, spec in deps.items():
            spec = {"version": spec} if isinstance(spec, str) else dict(spec)
            if name in crates:
                spec.pop("git")
                spec["path"] = str(crates[name])
            known = merged.setdefault(name, {})
            features = sorted(set(known.get("features", [])) | set(spec.get("features", [])))
            known.update(spec)
            if features:
                known["features"] = features
    return merged if merged.keys() & crates.keys() else None


def toml_value(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int)):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return "{ " + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + " }"


def write_if_changed(path, text):
    # Unchanged files keep their time, so that cargo rebuilds only what changed.
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def build(readme, deps, examples):
    """One binary per README, each example a module; returns the binary's path."""
    name = "readme-" + (Path(readme).parent.name or "workspace")
    crate = TARGET / "readme-check" / name
    manifest = f'[package]\nname = "{name}"\nversion = "0.0.0"\nedition = "2024"\npublish = false\n\n'
    manifest += "[workspace]\n\n[dependencies]\n"
    manifest += "".join(f"{dep} = {toml_value(spec)}\n" for dep, spec in sorted(deps.items()))
    write_if_changed(crate / "Cargo.toml", manifest)
    # The workspace's lock: the versions the crates are tested with, and no download.
    write_if_changed(crate / "Cargo.lock", (ROOT / "Cargo.lock").read_text(encoding="utf-8"))
    main = ["// Written by scripts/readme-check.py: the Rust examples of " + readme,
            "// Examples bind values to show them: unused ones are no fault here.",
            "#![allow(unused)]",
            "use std::process::{ExitCode, Termination};", ""]
    arms = []
    for number, block in enumerate(examples, start=1):
        main.append(f"mod example_{number}; // {block.where}")
        code = block.code
        if block.is_program:
            code = MAIN.sub(r"pub \1", code, count=1)
            arms.append(f'        Some("{number}") => example_{number}::main().report(),')
        write_if_changed(crate / "src" / f"example_{number}.rs", code)
    main += ["", "fn main() -> ExitCode {", "    match std::env::args().nth(1).as_deref() {"]
    main += arms + ['        _ => ExitCode::FAILURE,', "    }", "}", ""]
    write_if_changed(crate / "src" / "main.rs", "\n".join(main))
    status = subprocess.run(["cargo", "build", "--quiet", "--manifest-path", str(crate / "Cargo.toml")],
                            env={**os.environ, "CARGO_TARGET_DIR": str(TARGET)})
    if status.returncode:
        raise Failure(f"{readme}: its examples do not build with the dependencies it documents")
    return TARGET / "debug" / name


class Mock:
    """A `mediagen-mock` on 127.0.0.1:0; each program gets a world of its own."""

    def __init__(self):
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEDIAGEN_")}
        self.process = subprocess.Popen(
            [str(TARGET / "debug" / "mediagen-mock"), "--listen", "127.0.0.1:0"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        first = self.process.stdout.readline()
        address = re.search(r"listening on (http://\S+)", first)
        if not address:
            self.close()
            raise Failure(f"mediagen-mock did not say where it listens: {first!r}")
        self.uri = address.group(1)
        # Read what else it prints, so that a full pipe never stops it.
        threading.Thread(target=self.process.stdout.read, daemon=True).start()

    def call(self, method, url, body=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(url, data=data, method=method,
                                         headers={"content-type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                text = answer.read()
        except urllib.error.HTTPError as error:
            raise Failure(f"{method} {url} answered {error.code}: {error.read().decode()}")
        return json.loads(text) if text else None

    def world(self, settings):
        return self.call("POST", f"{self.uri}/_mock/worlds", settings)

    def close(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=30)


def png():
    """A 1×1 PNG: what a block's `file NAME.png` stands for."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\x00\xff\x80\x00")) + chunk(b"IEND", b""))


def run(binary, number, block, mock):
    settings, calls, files, creates = dict(WORLD), [], [], []
    for directive in block.directives:
        word, _, rest = directive.partition(" ")
        try:
            if word == "world":
                settings.update(json.loads(rest))
            elif word in ("POST", "PUT", "DELETE"):
                path, _, body = rest.partition(" ")
                calls.append((word, path, json.loads(body) if body else None))
            elif word == "file":
                files.append(rest)
            elif word == "creates":
                creates.append(rest)
            else:
                raise Failure(f"{block.where}: unknown readme-check directive: {directive}")
        except json.JSONDecodeError as error:
            raise Failure(f"{block.where}: the directive's JSON does not parse ({error}): {directive}")
    world = mock.world(settings)
    for method, path, body in calls:
        mock.call(method, world["baseUrl"] + path, body)
    with tempfile.TemporaryDirectory(prefix="mediagen-readme-") as folder:
        for name in files:
            (Path(folder) / name).write_bytes(png() if name.endswith(".png") else b"")
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEDIAGEN_")}
        env.update(MEDIAGEN_BASE_URL=world["baseUrl"], MEDIAGEN_API_KEY=world["demoApiKey"])
        try:
            done = subprocess.run([str(binary), str(number)], cwd=folder, env=env,
                                  capture_output=True, text=True, timeout=RUN_SECONDS)
        except subprocess.TimeoutExpired:
            raise Failure(f"{block.where}: still running after {RUN_SECONDS} s")
        if done.returncode:
            raise Failure(f"{block.where}: exited {done.returncode} against the mock\n"
                          f"--- stdout\n{done.stdout}--- stderr\n{done.stderr}")
        for pattern in creates:
            if not list(Path(folder).glob(pattern)):
                raise Failure(f"{block.where}: made no {pattern}")
    mock.call("DELETE", f"{mock.uri}/_mock/worlds/{world['id']}")


def main(readmes):
    crates, repository = workspace()
    if not readmes:
        listed = subprocess.run(["git", "ls-files", "README.md", "*/README.md"], cwd=ROOT,
                                capture_output=True, text=True, check=True).stdout
        readmes = listed.split()
    builds = []
    for readme in readmes:
        blocks = blocks_of(readme)
        rust = [block for block in blocks if block.is_rust]
        for block in rust:
            lint(block)
        check_sources(blocks, crates, repository)
        deps = documented_dependencies(blocks, crates)
        if deps is None:
            print(f"{readme}: {len(rust)} Rust block(s), none hidden")
            continue
        names = "|".join(re.escape(dep.replace("-", "_")) for dep in deps.keys() & crates.keys())
        examples = [block for block in rust if "compile_fail" not in block.tags
                    and re.search(rf"\b({names})::", block.code)]
        if not examples:
            raise Failure(f"{readme}: documents [dependencies] but has no example using them")
        builds.append((readme, build(readme, deps, examples), examples))
        print(f"{readme}: {len(examples)} example(s) built with the dependencies it documents")
    if not builds:
        return
    # Built as scripts/prism-check.sh builds it, so that CI builds it once.
    subprocess.run(["cargo", "build", "--quiet", "-p", "mediagen-mock-server", "--bin", "mediagen-mock",
                    "-p", "mediagen-cli", "--bin", "mediagen"], cwd=ROOT, check=True)
    mock = Mock()
    try:
        for readme, binary, examples in builds:
            ran = 0
            for number, block in enumerate(examples, start=1):
                if block.is_program:
                    run(binary, number, block, mock)
                    ran += 1
            print(f"{readme}: {ran} program(s) ran, each against a world of the mock")
    finally:
        mock.close()


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except Failure as failure:
        sys.exit(f"readme-check: {failure}")
