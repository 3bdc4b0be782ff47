"""The limits: `retry-before-retry-after` (windowed 429) and
`concurrency-retry-loop` (the 429 of 5 active tasks).

Limits, rules 3 and 4; POST /v1/generations, rule 5; Limits, rule 5.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

import clients
from harness import Edge, assert_named, assert_never_accused, assert_not_accused, seeded, steady

RETRY_AFTER = "retry-before-retry-after"
LOOP = "concurrency-retry-loop"

# -- the general limit: 60 requests a minute per address ------------------------


def spend_the_general_limit(edge: Edge) -> None:
    """Another client behind the same address (Limits: "several keys behind one
    address share it") uses the minute's 60 requests."""
    _, neighbour = edge.new_user()
    for _ in range(60):
        assert neighbour.send("GET", "/v1/webhook-endpoints").status == 200


def list_endpoints_waiting(
    svc: clients.Service, sleep: clients.Sleep, wait: Callable[[clients.Answer], float]
) -> list[clients.Answer]:
    answers = [svc.send("GET", "/v1/webhook-endpoints")]
    assert answers[0].status == 429 and answers[0].retry_after is not None, answers[0].body
    sleep(wait(answers[0]))
    answers.append(svc.send("GET", "/v1/webhook-endpoints"))
    return answers


@pytest.mark.parametrize(
    ("name", "wait"),
    [("at once", lambda answer: 0.0), ("after a fixed 1 s", lambda answer: 1.0)],
)
def test_a_retry_before_retry_after_is_named(
    limited: Callable[[], Edge], name: str, wait: Callable
) -> None:
    edge = limited()
    spend_the_general_limit(edge)
    _, svc = edge.new_user()
    list_endpoints_waiting(svc, edge.sleep, wait)
    assert_named(edge.judge(), RETRY_AFTER)


def test_a_retry_after_waiting_retry_after_is_not_accused(limited: Callable[[], Edge]) -> None:
    for _ in range(5):
        edge = limited()
        spend_the_general_limit(edge)
        _, svc = edge.new_user()
        answers = list_endpoints_waiting(svc, edge.sleep, lambda answer: answer.retry_after)
        assert answers[-1].status == 200, answers[-1].body
        assert_not_accused(edge.judge(), RETRY_AFTER)


# -- the concurrency limit: 5 active tasks ----------------------------------------
# The client's batch holds 5 long tasks (veo-3: 181 s), so nothing frees a slot
# while it backs off for at most 15 s.

SIXTH = {"modelSlug": "veo-3", "prompt": "the sixth clip"}


def with_five_active(edge: Edge) -> tuple[str, clients.Service, list[str]]:
    user_id, svc = edge.new_user(balance_rub=10_000)
    return user_id, svc, clients.start_batch(svc, "veo-3", 5)


def test_a_create_resent_in_a_tight_loop_is_named(edge: Edge) -> None:
    def scenario(edge: Edge) -> list[float]:
        _, svc, _ = with_five_active(edge)
        answers = clients.create_in_a_tight_loop(svc, edge.sleep, SIXTH)
        assert all(clients.is_concurrency_refusal(a) for a in answers)
        return svc.sent[5:]

    assert_named(steady(edge, scenario), LOOP)


def test_full_jitter_after_the_concurrency_limit_is_never_accused(edge: Edge) -> None:
    def run(edge: Edge, rng: random.Random, seed: int) -> None:
        _, svc, _ = with_five_active(edge)
        answers = clients.create_backing_off(svc, edge.sleep, SIXTH, clients.full_jitter(rng))
        assert len(answers) == 5 and clients.is_concurrency_refusal(answers[-1])

    assert_never_accused(
        seeded(edge, "create after 5 active tasks, full jitter 0-1, 0-2, 0-4, 0-8 s", LOOP, run)
    )


def test_an_early_first_retry_then_back_off_is_not_accused(edge: Edge) -> None:
    # Once at once (a slot may have freed just then), then 2, 4, 8 s.
    _, svc, _ = with_five_active(edge)
    clients.create_backing_off(svc, edge.sleep, SIXTH, [0.05, 2.0, 4.0, 8.0])
    assert_not_accused(edge.judge(), LOOP)


@pytest.mark.parametrize(
    "early_retry", [None, 0.05], ids=["reads first", "one early retry, then reads"]
)
def test_a_create_once_a_task_has_ended_is_not_accused(
    edge: Edge, early_retry: float | None
) -> None:
    _, svc, own = with_five_active(edge)
    answers = clients.create_when_a_task_ends(svc, edge.sleep, SIXTH, own, early_retry=early_retry)
    assert answers[-1].status == 202, answers[-1].body
    assert_not_accused(edge.judge(), LOOP)
