"""The verdict from Python: `world.verdict()`, and the plugin failing a test
whose world ends with a violation under a strict verdict."""

from __future__ import annotations

import pytest

# A test file for pytester: one client that retries a create after a 503 with
# a fresh Idempotency-Key (a violation), one that keeps its key (clean), one
# that sends no key at all (advice only).
CLIENTS = """
import json
import urllib.error
import urllib.request

NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def create(world, key):
    body = json.dumps({"modelSlug": "flux-schnell", "prompt": "a lighthouse"}).encode()
    headers = {"Authorization": f"Bearer {world.api_key}", "Content-Type": "application/json"}
    if key:
        headers["Idempotency-Key"] = key
    request = urllib.request.Request(world.url("/v1/generations"), body, headers, method="POST")
    try:
        with NO_PROXY.open(request, timeout=10) as answer:
            return answer.status
    except urllib.error.HTTPError as error:
        return error.code


def test_a_new_key_after_a_503(mediagen_mock):
    mediagen_mock.inject_fault("error", method="POST", path="/v1/generations", status=503)
    assert create(mediagen_mock, "key-1") == 503
    assert create(mediagen_mock, "key-2") == 202


def test_the_same_key_after_a_503(mediagen_mock):
    mediagen_mock.inject_fault("error", method="POST", path="/v1/generations", status=503)
    assert create(mediagen_mock, "key-1") == 503
    assert create(mediagen_mock, "key-1") == 202


def test_no_key(mediagen_mock):
    assert create(mediagen_mock, None) == 202
    assert mediagen_mock.verdict()["findings"][0]["rule"] == "create-without-key"
"""


def test_a_strict_verdict_fails_the_test_with_a_violation_and_lists_its_findings(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini("[pytest]\nmediagen_mock_verdict = strict\n")
    pytester.makepyfile(test_clients=CLIENTS)
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*FAILED*test_a_new_key_after_a_503*",
        ]
    )
    result.stdout.fnmatch_lines(["*violation create-retry-new-key (x1)*"])


def test_without_strict_the_verdict_is_read_but_fails_nothing(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_clients=CLIENTS)
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=3)


def test_the_marker_makes_one_test_strict(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_clients=CLIENTS.replace(
            "def test_a_new_key_after_a_503",
            "import pytest\n\n\n@pytest.mark.mediagen_mock_strict\ndef test_a_new_key_after_a_503",
        )
    )
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=2, failed=1)
