"""What an integrator writes once: create a generation, follow it to the end."""

from __future__ import annotations

import time
import uuid
from typing import Any, Callable

import httpx

from mediagen_mock import World

FINAL = {"SUCCEEDED", "FAILED", "CANCELLED"}


def create_generation(
    http: httpx.Client, model_slug: str, prompt: str, api_key: str | None = None
) -> dict[str, Any]:
    """POST /v1/generations with a fresh Idempotency-Key; returns the 202 body."""
    headers = {"Idempotency-Key": str(uuid.uuid4())}
    if api_key is not None:
        headers["Authorization"] = f"Bearer {api_key}"
    answer = http.post(
        "/v1/generations", json={"modelSlug": model_slug, "prompt": prompt}, headers=headers
    )
    assert answer.status_code == 202, answer.text
    return answer.json()


def follow(
    mock: World,
    http: httpx.Client,
    generation_id: str,
    api_key: str | None = None,
    step_seconds: float = 1.0,
    max_steps: int = 120,
) -> dict[str, Any]:
    """Polls a generation, moving the mock's clock between polls, until it is final."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    for _ in range(max_steps):
        answer = http.get(f"/v1/generations/{generation_id}", headers=headers)
        assert answer.status_code == 200, answer.text
        generation = answer.json()
        if generation["status"] in FINAL:
            return generation
        mock.advance_clock(step_seconds)
    raise AssertionError(f"generation {generation_id} not final after {max_steps} steps")


def wait_until(predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    """Waits in real time for something another thread or process does."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.02)
