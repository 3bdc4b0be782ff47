"""A generation over plain HTTP, followed to its end by moving the mock's clock,
and the refund of a failed one."""

from __future__ import annotations

import httpx
from helpers import create_generation, follow

from mediagen_mock import World


def test_a_generation_succeeds_and_its_image_can_be_downloaded(
    mediagen_mock: World, http: httpx.Client
) -> None:
    catalog = http.get("/v1/catalog/").json()
    assert "flux-schnell" in {model["slug"] for model in catalog["models"]}

    created = create_generation(http, "flux-schnell", "a lighthouse")
    assert created["status"] == "PENDING"

    generation = follow(mediagen_mock, http, created["id"])

    assert generation["status"] == "SUCCEEDED"
    assert generation["costRub"] == created["costRub"]
    image = http.get(generation["outputUrls"][0])
    assert image.status_code == 200
    assert image.content.startswith(b"\x89PNG\r\n\x1a\n")


def test_a_failed_generation_gives_the_money_back(
    mediagen_mock: World, http: httpx.Client
) -> None:
    user = mediagen_mock.create_user(balance_rub=100)
    mediagen_mock.force_outcome(user_id=user.user_id, outcome="fail", error_code="content_policy")

    created = create_generation(http, "flux-schnell", "a lighthouse", api_key=user.api_key)
    assert mediagen_mock.balance(user.user_id) == 100 - created["costRub"]  # reserved

    generation = follow(mediagen_mock, http, created["id"], api_key=user.api_key)

    assert generation["status"] == "FAILED"
    assert generation["errorCode"] == "content_policy"
    assert mediagen_mock.balance(user.user_id) == 100  # refunded, once
