"""Faults, response modes and top-up payments through MockServer, against the
installed binary."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from mediagen_mock import MockError, MockServer

NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def call(mock: MockServer, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(mock.url(path), data=data, method=method)
    request.add_header("Authorization", f"Bearer {mock.api_key}")
    request.add_header("Content-Type", "application/json")
    try:
        with NO_PROXY.open(request, timeout=5) as answer:
            return answer.status, json.load(answer)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def test_a_fault_is_listed_used_up_removed_and_refused_when_impossible() -> None:
    with MockServer() as mock:
        fault = mock.inject_fault(
            "error", method="GET", path="/v1/billing/balance", code="BILLING_TIMEOUT", count=2
        )
        assert (fault["status"], fault["remaining"]) == (502, 2)
        assert call(mock, "GET", "/v1/billing/balance")[0] == 502
        assert [f["remaining"] for f in mock.list_faults()] == [1]
        mock.remove_fault(fault["id"])
        with pytest.raises(MockError) as gone:
            mock.remove_fault(fault["id"])
        assert call(mock, "GET", "/v1/billing/balance")[0] == 200
        mock.inject_fault("drop", path="/health")
        mock.clear_faults()
        assert mock.list_faults() == []
        with pytest.raises(MockError) as refused:
            mock.inject_fault("delay")
    assert (gone.value.status, gone.value.code) == (404, "NOT_FOUND")
    assert (refused.value.status, refused.value.code) == (400, "VALIDATION_ERROR")


def test_minimal_answers_carry_only_what_the_document_guarantees() -> None:
    with MockServer(responses="minimal") as mock:
        status, created = call(
            mock, "POST", "/v1/generations", {"modelSlug": "flux-schnell", "prompt": "a fox"}
        )
        assert status == 202
        assert sorted(created) == ["costRub", "id", "status"]
        mock.update_settings(responses="extra")
        status, read = call(mock, "GET", f"/v1/generations/{created['id']}")
        assert "mockExtra" in read
        assert mock.get_settings()["responses"] == "extra"


def test_a_topup_waits_for_its_payment() -> None:
    with MockServer() as mock:
        user = mock.create_user(balance_rub=0)
        request = urllib.request.Request(
            mock.url("/v1/billing/topup"),
            data=json.dumps({"amountRub": 500}).encode(),
            method="POST",
            headers={"Authorization": f"Bearer {user.api_key}", "Content-Type": "application/json"},
        )
        with NO_PROXY.open(request, timeout=5) as answer:
            topup = json.load(answer)
        assert topup["status"] == "PENDING" and topup["paymentUrl"]
        assert mock.balance(user.user_id) == 0
        assert mock.pay_topup(topup["id"])["status"] == "SUCCEEDED"
        assert mock.balance(user.user_id) == 500
