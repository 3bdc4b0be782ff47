"""The verdict from Python: `world.verdict()` and its strict choice of rules,
and the plugin: failing a test whose world's verdict is not clean under a
strict verdict, naming the rules first, and showing the verdict beside a
test that failed on its own."""

from __future__ import annotations

import urllib.request

import pytest

from mediagen_mock import MockError, World
from mediagen_mock.pytest_plugin import _verdict_text

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


# A summary line as wide as it needs: the first line of the message whole.
WIDE = ("-rA", "-p", "no:cacheprovider")


@pytest.fixture(autouse=True)
def _wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "300")


def test_a_strict_verdict_fails_the_test_with_a_violation_and_lists_its_findings(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini("[pytest]\nmediagen_mock_verdict = strict\n")
    pytester.makepyfile(test_clients=CLIENTS)
    result = pytester.runpytest_subprocess(*WIDE)
    result.assert_outcomes(passed=2, failed=1)
    # The one-line summary names the rule before anything else.
    result.stdout.fnmatch_lines(
        [
            "FAILED test_clients.py::test_a_new_key_after_a_503 - "
            "Failed: create-retry-new-key — mediagen-mock verdict: 1 finding of 1 fails the test*",
        ]
    )
    result.stdout.fnmatch_lines(["*violation create-retry-new-key (x1) fails: *"])
    # The advice of test_no_key fails nothing, and the verdict is not shown twice.
    result.stdout.fnmatch_lines(["PASSED test_clients.py::test_no_key"])
    result.stdout.no_fnmatch_line("*- mediagen-mock verdict -*")


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


def test_strict_with_rules_in_the_ini_fails_on_their_advice_too_also_under_xdist(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini(
        "[pytest]\nmediagen_mock_verdict = strict:create-without-key,read-after-final\n"
    )
    pytester.makepyfile(test_clients=CLIENTS)
    result = pytester.runpytest_subprocess(*WIDE, "-n", "2")
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(
        [
            "FAILED test_clients.py::test_no_key - Failed: create-without-key — "
            "mediagen-mock verdict: 1 finding of 1 fails the test "
            "(strict: create-without-key, read-after-final; *",
        ]
    )
    result.stdout.fnmatch_lines(["*advice create-without-key (x1) fails: *"])
    result.stdout.fnmatch_lines(["*FAILED test_clients.py::test_a_new_key_after_a_503 - *"])


def test_the_marker_takes_rules_of_advice(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_clients=CLIENTS.replace(
            "def test_no_key",
            '@pytest.mark.mediagen_mock_strict("create-without-key")\ndef test_no_key',
        ).replace("import json", "import json\n\nimport pytest")
    )
    result = pytester.runpytest_subprocess(*WIDE)
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "FAILED test_clients.py::test_no_key - "
            "Failed: create-without-key — mediagen-mock verdict: *"
        ]
    )


def test_a_mistyped_rule_fails_with_the_mocks_message_naming_the_known_rules(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini("[pytest]\nmediagen_mock_verdict = strict:create-without-kee\n")
    pytester.makepyfile(test_clients=CLIENTS)
    result = pytester.runpytest_subprocess(*WIDE)
    result.assert_outcomes(failed=3)
    result.stdout.fnmatch_lines(
        [
            "FAILED test_clients.py::test_the_same_key_after_a_503 - "
            "Failed: mediagen-mock verdict: strict:create-without-kee refused — "
            "*create-without-kee*"
        ]
    )
    # The mock's message lists the rules it knows; the call and its status follow.
    result.stdout.fnmatch_lines(
        [
            "mediagen-mock verdict: strict:create-without-kee refused — *create-without-key*",
            "  GET /_mock/verdict?strict=create-without-kee: 400 VALIDATION_ERROR (req_*)",
        ]
    )
    result.stdout.no_fnmatch_line("*During handling of the above exception*")


def test_an_ini_value_that_is_not_a_mode_stops_the_run(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nmediagen_mock_verdict = strickt\n")
    pytester.makepyfile(test_clients=CLIENTS)
    result = pytester.runpytest_subprocess()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*mediagen_mock_verdict = 'strickt': expected 'strict'*"])


def test_a_test_that_fails_on_its_own_shows_its_worlds_verdict_as_a_section(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        test_clients=CLIENTS
        + """

def test_fails_after_a_new_key(mediagen_mock):
    test_a_new_key_after_a_503(mediagen_mock)
    assert False, "the client's own check"


def test_fails_without_a_finding(mediagen_mock):
    assert False, "nothing to judge"
"""
    )
    result = pytester.runpytest_subprocess(*WIDE)
    result.assert_outcomes(passed=3, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*_ test_fails_after_a_new_key _*",
            "*AssertionError: the client's own check*",
            "*- mediagen-mock verdict -*",
            "create-retry-new-key — mediagen-mock verdict: 1 finding of 1 fails the test*",
            "  violation create-retry-new-key (x1) fails: *",
            "*_ test_fails_without_a_finding _*",
        ]
    )
    # The summary line is the test's own failure, and a world without findings shows none.
    result.stdout.fnmatch_lines(
        ["FAILED test_clients.py::test_fails_after_a_new_key - AssertionError: the client's own*"]
    )
    assert result.stdout.str().count("- mediagen-mock verdict -") == 1


def test_strict_rules_choose_which_advice_spoils_clean(mediagen_mock: World) -> None:
    body = b'{"modelSlug": "flux-schnell", "prompt": "a lighthouse"}'
    headers = {
        "Authorization": f"Bearer {mediagen_mock.api_key}",
        "Content-Type": "application/json",
    }
    request = urllib.request.Request(mediagen_mock.url("/v1/generations"), body, headers)
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(request, timeout=10) as answer:
        assert answer.status == 202

    lenient = mediagen_mock.get_verdict()
    assert lenient["clean"] is True
    assert [(f["rule"], f["fails"]) for f in lenient["findings"]] == [("create-without-key", False)]

    for strict in (["create-without-key", "poll-rate"], "create-without-key,poll-rate"):
        judged = mediagen_mock.get_verdict(strict=strict)
        assert judged["clean"] is False
        assert [(f["rule"], f["fails"]) for f in judged["findings"]] == [
            ("create-without-key", True)
        ]
    assert mediagen_mock.verdict(["poll-rate"])["clean"] is True
    assert mediagen_mock.verdict([])["clean"] is True


def test_an_unknown_rule_is_refused_with_the_known_ones(mediagen_mock: World) -> None:
    with pytest.raises(MockError) as refused:
        mediagen_mock.get_verdict(strict=["poll-rat"])
    assert (refused.value.status, refused.value.code) == (400, "VALIDATION_ERROR")
    assert "poll-rate" in refused.value.message
    assert "?strict=poll-rat" in str(refused.value)


def test_the_text_names_the_failing_rules_first_and_a_receivers_endpoint_and_messages() -> None:
    verdict = {
        "clean": False,
        "checked": {"requests": 4, "deliveries": 2},
        "findings": [
            {
                "rule": "create-without-key",
                "severity": "advice",
                "message": "a create without a key",
                "documentRule": "Generations",
                "advice": "send a key",
                "requestIds": ["req_1"],
                "count": 1,
                "fails": False,
            },
            {
                "rule": "receiver-failed",
                "severity": "violation",
                "message": "the receiver answered 500",
                "documentRule": "Events",
                "advice": "answer 2xx",
                "requestIds": ["msg_1"],
                "messageIds": ["msg_1", "msg_2"],
                "endpoint": {"id": "we_1", "url": "http://127.0.0.1:9/hook"},
                "count": 2,
                "fails": True,
            },
            {
                "rule": "poll-rate",
                "severity": "advice",
                "message": "too many reads",
                "documentRule": "Limits",
                "advice": "poll slower",
                "requestIds": ["req_2", "req_3"],
                "count": 3,
                "fails": True,
            },
        ],
    }
    lines = _verdict_text(verdict, ["poll-rate"]).splitlines()
    assert lines[0] == (
        "receiver-failed, poll-rate — mediagen-mock verdict: 2 findings of 3 fail the test "
        "(strict: poll-rate; 4 requests, 2 deliveries checked)"
    )
    assert lines[1:] == [
        "  violation receiver-failed (x2) fails: the receiver answered 500",
        "    document: Events; do: answer 2xx",
        "    endpoint: we_1 http://127.0.0.1:9/hook; messages: msg_1, msg_2",
        "  advice poll-rate (x3) fails: too many reads",
        "    document: Limits; do: poll slower",
        "    requests: req_2, req_3",
        "  advice create-without-key (x1): a create without a key",
        "    document: Generations; do: send a key",
        "    requests: req_1",
    ]
