"""`mediagen-mock judge --junit FILE`: the file, read by a JUnit reader
(junitparser) as a CI system reads it: one suite, a case per rule, a failure
per finding that fails the run, counts that add up, text that survives."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import junitparser

from mediagen_mock import find_binary

# A client in the judged command: the world from its environment, a fault
# injected through the world's control API, and calls to the service.
PRELUDE = """
import json, os, urllib.request, urllib.error
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))
TOKEN = os.environ.get("MEDIAGEN_MOCK_CONTROL_TOKEN")

def call(url, body, headers):
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json", **headers})
    try:
        with OPENER.open(request, timeout=30) as answer:
            return answer.status
    except urllib.error.HTTPError as error:
        return error.code

def create(key=None):
    headers = {"Authorization": "Bearer " + os.environ["MEDIAGEN_API_KEY"]}
    if key:
        headers["Idempotency-Key"] = key
    return call(os.environ["MEDIAGEN_BASE_URL"] + "/v1/generations",
                {"modelSlug": "flux-schnell", "prompt": "a lighthouse"}, headers)

def unavailable_once():
    fault = {"effect": "error", "status": 503, "method": "POST", "path": "/v1/generations",
             "count": 1}
    headers = {"Authorization": "Bearer " + TOKEN} if TOKEN else {}
    assert call(os.environ["MEDIAGEN_MOCK_URL"] + "/_mock/faults", fault, headers) == 201
"""

NEW_KEY_AFTER_503 = """
unavailable_once()
assert create("key-1") == 503
assert create("key-2") == 202
"""

WITHOUT_KEY = """
assert create() == 202
"""


def judge(tmp_path: Path, body: str, *args: str) -> tuple[int, str, junitparser.TestSuite]:
    """Runs the client under the judge; its exit code, what it told, and the suite."""
    report = tmp_path / "verdict.xml"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEDIAGEN_")}
    done = subprocess.run(
        [
            find_binary(),
            "judge",
            "--junit",
            str(report),
            *args,
            "--",
            sys.executable,
            "-c",
            PRELUDE + body,
        ],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    xml = junitparser.JUnitXml.fromfile(str(report))
    suites = list(xml) if isinstance(xml, junitparser.JUnitXml) else [xml]
    assert len(suites) == 1, "one suite"
    return done.returncode, done.stderr, suites[0]


def counts(suite: junitparser.TestSuite) -> tuple[int, int, int]:
    return suite.tests, suite.failures, suite.errors


def test_a_violation_is_one_failure_of_its_rules_case_and_the_counts_add_up(tmp_path: Path) -> None:
    code, told, suite = judge(tmp_path, NEW_KEY_AFTER_503)
    assert code == 1, told
    assert suite.name == "mediagen-mock verdict"
    cases = {case.name: case for case in suite}
    assert len(cases) == suite.tests >= 14, "a case per rule, passing ones too"
    assert all(case.classname == "mediagen-mock.verdict" for case in suite)
    failed = {name: case for name, case in cases.items() if not case.is_passed}
    assert list(failed) == ["create-retry-new-key"]
    [failure] = failed["create-retry-new-key"].result
    assert isinstance(failure, junitparser.Failure)
    assert failure.type == "create-retry-new-key"
    assert "Idempotency-Key" in failure.message
    for fact in ("document: ", "advice: ", "requests: req_"):
        assert fact in failure.text
    assert "create-retry-new-key: violation" in told

    said = counts(suite)
    suite.update_statistics()
    assert counts(suite) == said == (len(cases), 1, 0), "the counts the judge wrote"


def test_advice_passes_with_its_words_in_system_out_until_strict_makes_it_fail(
    tmp_path: Path,
) -> None:
    code, told, suite = judge(tmp_path, WITHOUT_KEY)
    assert code == 0, told
    case = next(case for case in suite if case.name == "create-without-key")
    assert case.is_passed
    assert "create-without-key: advice" in (case.system_out or "")
    assert suite.failures == 0

    code, told, suite = judge(tmp_path, WITHOUT_KEY, "--strict=create-without-key")
    assert code == 1, told
    case = next(case for case in suite if case.name == "create-without-key")
    [failure] = case.result
    assert isinstance(failure, junitparser.Failure)
    assert failure.type == "create-without-key"
    assert suite.failures == 1


def test_markup_quotes_and_line_breaks_come_back_as_they_were(tmp_path: Path) -> None:
    body = '# <a & b> "quoted" ]]>\nx = "\t"\n'
    code, told, suite = judge(tmp_path, body)
    assert code == 0, told
    properties = {prop.name: prop.value for prop in suite.properties()}
    assert body in properties["command"], "the command, escaped and read back whole"
    assert properties["command.exitCode"] == "0"
