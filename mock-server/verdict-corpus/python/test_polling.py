"""Polling a generation: `poll-rate` (advice), `poll-rate-limited` (violation),
`read-after-final` (advice).

Limits: the general rate, 60 requests a minute per address, shared by the
client's active tasks; States and transitions: a client polls while the status
is PENDING or PROCESSING.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import clients
from harness import (
    Edge,
    assert_named,
    assert_never_accused,
    assert_not_accused,
    assert_not_named,
    seeded,
)

POLL_RATE = "poll-rate"
LIMITED = "poll-rate-limited"
AFTER_FINAL = "read-after-final"
RETRY_AFTER = "retry-before-retry-after"

# Task lengths on the mock (1 s queued, then the model's average): imagen-4
# 13 s, suno-v4 61 s, kling-2-1 91 s.


def start(svc: clients.Service, model: str) -> str:
    answer = clients.create(svc, {"modelSlug": model, "prompt": "a slow clip"}, clients.new_key())
    assert answer.status == 202, answer.body
    return str(answer.json["id"])


def test_polling_at_10_hz_gets_poll_rate_advice(edge: Edge) -> None:
    _, svc = edge.new_user()
    reads = clients.poll(svc, edge.sleep, start(svc, "imagen-4"), clients.every(0.1))
    assert len(reads) > 100
    assert_named(edge.judge(), POLL_RATE)


def test_polling_once_a_second_with_one_task_gets_no_poll_rate(edge: Edge) -> None:
    _, svc = edge.new_user()
    reads = clients.poll(svc, edge.sleep, start(svc, "kling-2-1"), clients.every(1.0))
    assert len(reads) >= 61
    findings = edge.judge()
    assert_not_accused(findings, POLL_RATE)
    assert_not_named(findings, AFTER_FINAL)


def test_two_tasks_each_read_every_2_s_get_no_poll_rate(edge: Edge) -> None:
    _, svc = edge.new_user()
    tasks = [start(svc, "kling-2-1"), start(svc, "kling-2-1")]
    reads = clients.poll_round_robin(svc, edge.sleep, tasks, per_read=1.0)
    assert reads >= 90
    assert_not_accused(edge.judge(), POLL_RATE)


def test_a_jittered_1_s_ticker_never_gets_poll_rate(edge: Edge) -> None:
    # Each read at its tick ± 0.1 s: 61 reads can fall within 60 seconds, at an
    # average pace of exactly one a second.
    def run(edge: Edge, rng: random.Random, seed: int) -> None:
        _, svc = edge.new_user()
        reads = clients.poll(svc, edge.sleep, start(svc, "suno-v4"), clients.ticker(rng))
        assert len(reads) >= 61

    assert_never_accused(
        seeded(edge, "poll one task on a 1 s ticker ± 0.1 s, 61 s", POLL_RATE, run)
    )


def test_polling_at_10_hz_into_the_general_limit_is_named_poll_rate_limited(
    limited: Callable[[], Edge],
) -> None:
    # It waits out each 429's retry-after, as it should; its pace is what is wrong.
    edge = limited()
    _, svc = edge.new_user()
    reads = clients.poll(svc, edge.sleep, start(svc, "kling-2-1"), clients.every(0.1))
    assert any(a.status == 429 for a in reads)
    findings = edge.judge()
    assert_named(findings, LIMITED)
    assert_not_named(findings, RETRY_AFTER)


def test_polling_once_a_second_with_the_limits_on_is_not_named_poll_rate_limited(
    limited: Callable[[], Edge],
) -> None:
    edge = limited()
    _, svc = edge.new_user()
    reads = clients.poll(svc, edge.sleep, start(svc, "kling-2-1"), clients.every(1.0))
    assert len(reads) >= 61
    findings = edge.judge()
    assert_not_accused(findings, LIMITED)
    assert_not_named(findings, POLL_RATE)


def test_reading_a_succeeded_generation_again_and_again_gets_advice(edge: Edge) -> None:
    _, svc = edge.new_user()
    clients.reread_after_final(svc, edge.sleep, start(svc, "flux-schnell"))
    assert_named(edge.judge(), AFTER_FINAL)


def test_a_poller_that_stops_at_succeeded_gets_no_read_after_final(edge: Edge) -> None:
    _, svc = edge.new_user()
    reads = clients.poll(svc, edge.sleep, start(svc, "flux-schnell"), clients.every(1.0))
    assert clients.generation_status(reads[-1]) == "SUCCEEDED"
    assert_not_accused(edge.judge(), AFTER_FINAL)
