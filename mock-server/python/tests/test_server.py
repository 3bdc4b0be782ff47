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
        clock = mock.get_clock()
    assert (clock["mode"], clock["timeScale"]) == ("real", 10)


def test_users_balances_keys_and_the_manual_clock() -> None:
    with MockServer() as mock:
        user = mock.create_user(balance_rub=250)
        assert mock.balance(user.user_id) == 250
        mock.set_balance(user.user_id, 12.5)
        assert mock.balance(user.user_id) == 12.5
        key = mock.create_key(user.user_id, scope="read_only")
        assert (key.scope, key.api_key.split("_")[2]) == ("read_only", key.public_part)
        before = mock.get_clock()["now"]
        assert mock.advance_clock(60)["now"] > before
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


def test_a_world_made_with_an_admin_token_sends_its_own_control_token() -> None:
    with MockServer(admin_token="s3cret") as mock:
        world = mock.create_world()
        other = mock.create_world()
        assert world.control_token and world.control_token != "s3cret"
        assert world.control_token != other.control_token
        assert world.admin_token == world.control_token
        world.advance_clock(5)

        crossed = urllib.request.Request(
            world.url("/_mock/clock"),
            headers={"Authorization": f"Bearer {other.control_token}"},
        )
        with pytest.raises(urllib.error.HTTPError) as raised:
            NO_PROXY.open(crossed, timeout=5)
        assert raised.value.code == 401

        world.delete()
        assert [w["id"] for w in mock.list_worlds()] == [other.id]


def test_a_world_made_without_an_admin_token_has_no_control_token() -> None:
    with MockServer() as mock:
        world = mock.create_world()
        assert world.control_token is None
        world.advance_clock(1)
        world.delete()


def test_each_test_gets_a_fresh_world_on_one_server_with_the_flags_given(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        """
        seen = {}

        def test_one(mediagen_mock, mediagen_mock_server):
            seen["server"] = mediagen_mock_server.base_url
            seen["world"] = mediagen_mock.base_url
            seen["user"] = mediagen_mock.create_user(balance_rub=5).user_id
            mediagen_mock.advance_clock(3600)
            assert mediagen_mock.get_settings()["responses"] == "minimal"

        def test_two(mediagen_mock, mediagen_mock_server):
            assert mediagen_mock_server.base_url == seen["server"]
            assert mediagen_mock.base_url != seen["world"]
            assert [w["baseUrl"] for w in mediagen_mock_server.list_worlds()] == [
                mediagen_mock.base_url
            ]
            assert mediagen_mock.get_user(seen["user"])  # raises: it lived in the first world
        """
    )
    result = pytester.runpytest_subprocess("--mediagen-mock-arg=--responses=minimal")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*404 NOT_FOUND*"])


def test_xdist_workers_share_one_server(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        **{
            f"test_worker_{n}": f"""
            import os

            def test_{n}(mediagen_mock, mediagen_mock_server):
                with open(os.path.join({str(pytester.path)!r}, "servers.txt"), "a") as seen:
                    seen.write(mediagen_mock_server.base_url + "\\n")
                mediagen_mock.advance_clock(60)
            """
            for n in range(4)
        }
    )
    result = pytester.runpytest_subprocess("-n", "2")
    result.assert_outcomes(passed=4)
    servers = (pytester.path / "servers.txt").read_text().split()
    assert len(servers) == 4 and len(set(servers)) == 1


def test_the_fixture_connects_to_a_running_mock_named_in_the_environment(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    with MockServer() as running:
        monkeypatch.setenv("MEDIAGEN_MOCK_URL", running.base_url)
        pytester.makepyfile(
            f"""
            def test_it(mediagen_mock, mediagen_mock_server):
                assert mediagen_mock_server.base_url == {running.base_url!r}
                assert mediagen_mock.base_url.startswith({running.base_url!r} + "/worlds/")
            """
        )
        result = pytester.runpytest_subprocess()
        result.assert_outcomes(passed=1)
        assert running.list_worlds() == [], "the test's world was deleted"


def test_a_snapshot_moves_an_account_into_a_new_world() -> None:
    with MockServer() as mock:
        user = mock.create_user(balance_rub=42)
        snapshot = mock.get_snapshot()
        world = mock.create_world()
        world.put_snapshot(snapshot)
        assert world.balance(user.user_id) == 42
        broken = dict(snapshot, version=2)
        with pytest.raises(MockError) as raised:
            world.put_snapshot(broken)
        assert raised.value.status == 400 and "version 2" in raised.value.message
        assert world.balance(user.user_id) == 42
        world.delete()
        assert mock.list_worlds() == []


def test_the_live_journal_tells_a_request_and_a_clock_move_in_order() -> None:
    with MockServer() as mock:
        world = mock.create_world()
        with world.stream_events(timeout=10) as events:
            world.inject_fault("error", method="GET", path="/v1/account", status=503)
            request = urllib.request.Request(
                world.url("/v1/account"), headers={"Authorization": f"Bearer {world.api_key}"}
            )
            with pytest.raises(urllib.error.HTTPError):
                NO_PROXY.open(request, timeout=5)
            world.advance_clock(5)
            seen = []
            for event in events:
                seen.append(event)
                if event["type"] == "clock":
                    break
    kinds = [event["type"] for event in seen]
    assert kinds == ["fault", "request", "clock"], kinds
    assert seen[1]["status"] == 503 and seen[1]["path"] == "/v1/account"
    assert seen[0]["requestId"] == seen[1]["requestId"]
    assert [e["seq"] for e in seen] == sorted(e["seq"] for e in seen)
