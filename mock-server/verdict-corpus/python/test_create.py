"""Creating a generation: `create-retry-new-key`, `create-without-key`, `repeat-final-error`.

POST /v1/generations, rule 7: a request with the same Idempotency-Key returns the
existing generation; no second charge. Errors, Client handling 2 and 3.
"""

from __future__ import annotations

import time

import pytest

import clients
from harness import Edge, assert_named, assert_not_accused, assert_not_named, describe

NEW_KEY = "create-retry-new-key"
NO_KEY = "create-without-key"
FINAL = "repeat-final-error"

PROMPT = {"modelSlug": "flux-schnell", "prompt": "a lighthouse at dusk"}

# How the first create goes wrong: a 503 before acting, a connection dropped
# before acting, a connection dropped after acting (the answer was lost).
FAULTS = {
    "503": {"effect": "error", "status": 503, "code": "SERVICE_UNAVAILABLE"},
    "dropped connection": {"effect": "drop"},
    "dropped after acting": {"effect": "drop_after"},
}


def break_first_create(edge: Edge, user_id: str, fault: dict) -> None:
    edge.fault(**fault, method="POST", path="/v1/generations", userId=user_id, count=1)


@pytest.mark.parametrize("fault", FAULTS, ids=list(FAULTS))
def test_a_create_sent_again_with_a_new_key_is_named(edge: Edge, fault: str) -> None:
    user_id, svc = edge.new_user()
    break_first_create(edge, user_id, FAULTS[fault])
    answer = clients.create_retrying_new_key(svc, edge.sleep, PROMPT, clients.exponential(None))
    assert answer is not None and answer.status == 202
    assert_named(edge.judge(), NEW_KEY)


@pytest.mark.parametrize("fault", FAULTS, ids=list(FAULTS))
def test_a_create_sent_again_with_the_same_key_is_not_accused(edge: Edge, fault: str) -> None:
    user_id, svc = edge.new_user()
    break_first_create(edge, user_id, FAULTS[fault])
    answer = clients.create_retrying_same_key(svc, edge.sleep, PROMPT, clients.exponential(None))
    assert answer is not None and answer.status == 202
    assert edge.user(user_id)["activeGenerations"] == 1, "one generation, one charge"
    assert_not_accused(edge.judge(), NEW_KEY)


def test_a_create_timed_out_and_sent_again_with_a_new_key_is_named(edge: Edge) -> None:
    # The answer comes 1.5 real seconds late; the client gives up after 0.5 s,
    # waits 1 s and sends again, while the first one's answer is still on its way.
    user_id, svc = edge.new_user()
    edge.fault(
        "delay", method="POST", path="/v1/generations", userId=user_id, count=1, delaySeconds=1.5
    )
    answer = clients.create_retrying_new_key(
        svc, edge.sleep, PROMPT, clients.exponential(None), timeout=0.5
    )
    assert answer is not None and answer.status == 202
    time.sleep(1.2)  # the first request's answer goes out (real seconds)
    assert edge.user(user_id)["activeGenerations"] == 2, "the first create acted too"
    assert_named(edge.judge(), NEW_KEY)


def test_a_create_timed_out_and_sent_again_with_the_same_key_is_not_accused(edge: Edge) -> None:
    user_id, svc = edge.new_user()
    edge.fault(
        "delay", method="POST", path="/v1/generations", userId=user_id, count=1, delaySeconds=1.5
    )
    answer = clients.create_retrying_same_key(
        svc, edge.sleep, PROMPT, clients.exponential(None), timeout=0.5
    )
    assert answer is not None and answer.status == 202, (answer.status, answer.body)
    time.sleep(1.2)  # the first request's answer goes out (real seconds)
    assert edge.user(user_id)["activeGenerations"] == 1, "one generation, one charge"
    assert_not_accused(edge.judge(), NEW_KEY)


def test_a_create_without_an_idempotency_key_gets_advice(edge: Edge) -> None:
    _, svc = edge.new_user()
    assert clients.create_without_key(svc, PROMPT).status == 202
    findings = edge.judge()
    assert_named(findings, NO_KEY)
    assert all(f["severity"] == "advice" for f in findings if f["rule"] == NO_KEY), describe(
        findings
    )


def test_a_create_with_an_idempotency_key_gets_no_advice(edge: Edge) -> None:
    _, svc = edge.new_user()
    assert clients.create(svc, PROMPT, clients.new_key()).status == 202
    assert_not_accused(edge.judge(), NO_KEY)


FINAL_ERRORS = {
    "400 VALIDATION_ERROR (modelSlug missing)": {"prompt": "a lighthouse"},
    "404 NOT_FOUND (no such model)": {"modelSlug": "no-such-model", "prompt": "a lighthouse"},
}


@pytest.mark.parametrize("body", FINAL_ERRORS.values(), ids=list(FINAL_ERRORS))
def test_a_request_sent_unchanged_after_a_final_error_is_named(edge: Edge, body: dict) -> None:
    _, svc = edge.new_user()
    answers = clients.create_repeating_unchanged(svc, edge.sleep, body)
    assert [a.status for a in answers][0] in (400, 404)
    assert_named(edge.judge(), FINAL)


@pytest.mark.parametrize("body", FINAL_ERRORS.values(), ids=list(FINAL_ERRORS))
def test_a_request_fixed_after_a_final_error_is_not_accused(edge: Edge, body: dict) -> None:
    _, svc = edge.new_user()
    answers = clients.create_fixing_the_request(
        svc,
        body,
        defaults={"modelSlug": "flux-schnell"},
        fallback_models=["flux-schnell"],
    )
    assert [a.status for a in answers][-1] == 202, [(a.status, a.body) for a in answers]
    findings = edge.judge()
    assert_not_accused(findings, FINAL)
    assert_not_named(findings, NEW_KEY)
