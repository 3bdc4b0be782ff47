"""MockServer against the installed binary: start, stop, control calls, errors."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
import uuid

import pytest

from mediagen_mock import MockError, MockServer, MockStartError, find_binary

NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def test_start_reads_the_address_and_the_demo_key_and_stop_ends_the_process() -> None:
    mock = MockServer()
    with mock:
        assert mock.base_url.startswith("http://127.0.0.1:")
        assert mock.api_key.startswith("mg_live_")
        with NO_PROXY.open(mock.url("/health"), timeout=5) as answer:
            assert answer.status == 200
        assert mock.running
    assert not mock.running
    mock.stop()  # a second stop does nothing
    with pytest.raises(RuntimeError):
        _ = mock.base_url


def test_a_process_that_dies_at_start_raises_with_its_stderr() -> None:
    with pytest.raises(MockStartError) as raised:
        MockServer(extra_args=["--no-such-flag"]).start()
    assert "--no-such-flag" in raised.value.stderr
    assert "--no-such-flag" in str(raised.value)


def test_a_missing_binary_named_in_the_environment_is_reported(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MEDIAGEN_MOCK_BIN", "/nonexistent/mediagen-mock")
    with pytest.raises(MockStartError, match="MEDIAGEN_MOCK_BIN"):
        find_binary()


def test_extra_args_replace_the_flags_the_class_would_pass() -> None:
    command = MockServer(extra_args=["--clock=real", "--time-scale", "10"]).command()
    assert "--clock=manual" not in command
    assert command[-3:] == ["--clock=real", "--time-scale", "10"]
    with MockServer(clock="real", time_scale=10) as mock:
        clock = mock.clock()
    assert (clock["mode"], clock["timeScale"]) == ("real", 10)


def test_users_balances_keys_and_the_manual_clock() -> None:
    with MockServer() as mock:
        user = mock.create_user(balance_rub=250)
        assert mock.balance(user.user_id) == 250
        mock.set_balance(user.user_id, 12.5)
        assert mock.balance(user.user_id) == 12.5
        key = mock.create_key(user.user_id, scope="read_only")
        assert (key.scope, key.api_key.split("_")[2]) == ("read_only", key.public_part)
        before = mock.clock()["now"]
        assert mock.advance(60)["now"] > before
        mock.reset()
        with pytest.raises(MockError) as raised:
            mock.balance(user.user_id)
    assert raised.value.status == 404


def test_an_error_of_the_control_api_carries_the_envelope() -> None:
    with MockServer() as mock:
        with pytest.raises(MockError) as raised:
            mock.set_model_state("no-such-model", "disabled")
    error = raised.value
    assert (error.status, error.code) == (404, "NOT_FOUND")
    assert error.request_id and error.request_id.startswith("req_")
    assert error.envelope["error"]["message"] == error.message
    assert "no-such-model" in str(error)


def test_the_admin_token_is_sent_on_control_calls() -> None:
    with MockServer(admin_token="s3cret") as mock:
        assert mock.create_user(balance_rub=1).api_key
        anonymous = urllib.request.Request(
            mock.url("/_mock/users"), data=json.dumps({}).encode(), method="POST"
        )
        with pytest.raises(urllib.error.HTTPError) as raised:
            NO_PROXY.open(anonymous, timeout=5)
    assert raised.value.code == 401


def test_the_fixture_resets_the_mock_between_tests_and_passes_flags(
    pytester: pytest.Pytester,
) -> None:
    key = f"mg_live_fixture_{uuid.uuid4().hex}"
    pytester.makepyfile(
        f"""
        users = []

        def test_one(mediagen_mock):
            assert mediagen_mock.api_key == "{key}"
            users.append(mediagen_mock.create_user(balance_rub=5).user_id)

        def test_two(mediagen_mock, mediagen_mock_server):
            assert mediagen_mock is mediagen_mock_server
            assert mediagen_mock.get_user(users[0])  # raises: reset removed the user
        """
    )
    result = pytester.runpytest_subprocess(f"--mediagen-mock-arg=--demo-api-key={key}")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*404 NOT_FOUND*"])
