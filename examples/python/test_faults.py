"""An injected 503 on create: the integrator's retry with the same
Idempotency-Key gets the generation, charged once."""

from __future__ import annotations

import uuid

import httpx

from mediagen_mock import World


def test_a_503_on_create_is_retried_with_the_same_idempotency_key(
    mediagen_mock: World, http: httpx.Client
) -> None:
    user = mediagen_mock.create_user(balance_rub=100)
    fault = mediagen_mock.inject_fault(
        "error",
        method="POST",
        path="/v1/generations",
        status=503,
        code="SERVICE_UNAVAILABLE",
        message="Service temporarily unavailable",
    )
    assert fault["id"]

    headers = {"Authorization": f"Bearer {user.api_key}", "Idempotency-Key": str(uuid.uuid4())}
    body = {"modelSlug": "flux-schnell", "prompt": "a lighthouse"}
    answers = []
    for _ in range(3):  # the service document's advice: retry a 503 with a delay
        answer = http.post("/v1/generations", json=body, headers=headers)
        answers.append(answer)
        if answer.status_code != 503:
            break
        mediagen_mock.advance_clock(1)

    assert [a.status_code for a in answers] == [503, 202]
    assert answers[0].json()["error"]["code"] == "SERVICE_UNAVAILABLE"
    cost = answers[1].json()["costRub"]
    assert mediagen_mock.balance(user.user_id) == 100 - cost  # one charge
