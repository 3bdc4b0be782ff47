"""Retrying a read through a 503 outage: `retry-without-backoff` and `too-many-attempts`.

Errors, Client handling 2: retry SERVICE_UNAVAILABLE with exponential delay.
Limits, rule 5: exponential delay with jitter, 1, 2, 4, 8 s, stop after 5 attempts.
"""

from __future__ import annotations

import random

import pytest

import clients
from harness import (
    Edge,
    assert_named,
    assert_never_accused,
    assert_not_accused,
    assert_not_named,
    seeded,
    steady,
)

BACKOFF = "retry-without-backoff"
ATTEMPTS = "too-many-attempts"


def read_through_outage(
    edge: Edge,
    rng: random.Random,
    waits: clients.Waits,
    outage: int,
    effect: str = "503",
    sent: list[float] | None = None,
) -> clients.Answer | None:
    """A client with one generation reads it while its route answers `outage`
    503s (or, with `effect="drop"`, closes the connection that many times).
    `sent` gets the send times of the reads."""
    user_id, svc = edge.new_user()
    created = clients.create(
        svc, {"modelSlug": "flux-schnell", "prompt": "a lighthouse"}, clients.new_key()
    )
    generation_id = created.json["id"]
    route = f"/v1/generations/{generation_id}"
    if effect == "drop":
        edge.fault("drop", method="GET", path=route, userId=user_id, count=outage)
    else:
        edge.outage("GET", route, user_id, outage)
    answer = clients.read_generation(svc, edge.sleep, generation_id, waits(rng))
    if sent is not None:
        sent.extend(svc.sent[1:])
    return answer


@pytest.mark.parametrize(
    ("name", "waits"),
    [
        ("at once", clients.no_wait),
        ("every 0.2 s", clients.fixed(0.2)),
        ("every 1 s, 4 retries", clients.fixed(1.0)),
    ],
)
def test_retries_at_a_fixed_pace_are_named_retry_without_backoff(
    edge: Edge, name: str, waits: clients.Waits
) -> None:
    def scenario(edge: Edge) -> list[float]:
        sent: list[float] = []
        answer = read_through_outage(edge, random.Random(0), waits, outage=4, sent=sent)
        assert answer is not None and answer.status == 200
        return sent

    assert_named(steady(edge, scenario), BACKOFF)


@pytest.mark.parametrize(
    ("name", "waits"),
    [
        ("full jitter: uniform from 0 up to 1, 2, 4, 8 s", clients.full_jitter),
        ("decorrelated jitter: min(cap, uniform(1, 3 * previous))", clients.decorrelated_jitter),
        ("equal jitter: half and up to all of 1, 2, 4, 8 s", clients.equal_jitter),
    ],
)
def test_jittered_back_off_is_never_accused(edge: Edge, name: str, waits: clients.Waits) -> None:
    def run(edge: Edge, rng: random.Random, seed: int) -> None:
        answer = read_through_outage(edge, rng, waits, outage=4)
        assert answer is not None and answer.status == 200

    assert_never_accused(seeded(edge, f"GET through 4 x 503, {name}", BACKOFF, run))


@pytest.mark.parametrize("effect", ["503", "drop"], ids=["503s", "dropped connections"])
def test_plain_exponential_back_off_is_not_accused(edge: Edge, effect: str) -> None:
    answer = read_through_outage(
        edge, random.Random(0), clients.exponential, outage=4, effect=effect
    )
    assert answer is not None and answer.status == 200
    assert_not_accused(edge.judge(), BACKOFF)


@pytest.mark.parametrize("effect", ["503", "drop"], ids=["503s", "dropped connections"])
def test_a_slow_fixed_interval_through_a_long_outage_is_not_accused(
    edge: Edge, effect: str
) -> None:
    # Every 10 s through a 40 s outage: no answer at 0, 10, 20, 30 s, the answer at 40 s.
    answer = read_through_outage(
        edge, random.Random(0), clients.fixed(10.0), outage=4, effect=effect
    )
    assert answer is not None and answer.status == 200
    assert_not_accused(edge.judge(), BACKOFF)


def test_ten_retries_with_back_off_are_named_too_many_attempts(edge: Edge) -> None:
    answer = read_through_outage(
        edge, random.Random(0), clients.ten_retries_with_back_off, outage=10
    )
    assert answer is not None and answer.status == 200
    assert_named(edge.judge(), ATTEMPTS)


def test_ten_retries_with_back_off_are_not_called_retry_without_backoff(edge: Edge) -> None:
    # The delays grow: what is wrong is their number, which has its own rule now.
    read_through_outage(edge, random.Random(0), clients.ten_retries_with_back_off, outage=10)
    assert_not_named(edge.judge(), BACKOFF)


def test_a_client_that_stops_after_five_attempts_is_not_accused(edge: Edge) -> None:
    answer = read_through_outage(edge, random.Random(0), clients.equal_jitter, outage=10)
    assert answer is not None and answer.status == 503  # it gave up
    findings = edge.judge()
    assert_not_accused(findings, ATTEMPTS)
    assert_not_accused(findings, BACKOFF)
