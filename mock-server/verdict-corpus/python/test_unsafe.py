"""A POST that may act, answered 503: `unsafe-repeat`.

Errors, Client handling: a request that may have taken effect is not sent again
blindly; POST /v1/webhook-endpoints has no Idempotency-Key, so the client reads
GET /v1/webhook-endpoints to see whether the first one took effect.
"""

from __future__ import annotations

import pytest

import clients
from harness import Edge, assert_named, assert_not_accused

UNSAFE = "unsafe-repeat"
URL = "http://127.0.0.1:9/webhooks"  # never delivered to: no task ends in these tests


@pytest.mark.parametrize("wait", [0.0, 1.0], ids=["at once", "after 1 s"])
def test_an_endpoint_post_sent_again_without_reading_is_named(edge: Edge, wait: float) -> None:
    user_id, svc = edge.new_user()
    edge.outage("POST", "/v1/webhook-endpoints", user_id, 1)
    answers = clients.add_endpoint_repeating(svc, edge.sleep, URL, wait)
    assert [a.status for a in answers] == [503, 201]
    assert_named(edge.judge(), UNSAFE)


def test_an_endpoint_post_sent_again_after_reading_the_list_is_not_accused(edge: Edge) -> None:
    user_id, svc = edge.new_user()
    edge.outage("POST", "/v1/webhook-endpoints", user_id, 1)
    created = clients.add_endpoint_reading_first(svc, edge.sleep, URL)
    assert created is not None and created["secret"].startswith("whsec_")
    assert [e["url"] for e in clients.endpoints(svc)] == [URL]
    assert_not_accused(edge.judge(), UNSAFE)


def test_an_endpoint_post_that_acted_before_its_connection_dropped_is_found_by_reading(
    edge: Edge,
) -> None:
    # The first POST acted; the client reads, finds it, and rotates the secret it never saw.
    user_id, svc = edge.new_user()
    edge.fault("drop_after", method="POST", path="/v1/webhook-endpoints", userId=user_id, count=1)
    created = clients.add_endpoint_reading_first(svc, edge.sleep, URL)
    assert created is not None and created["secret"].startswith("whsec_")
    assert [e["url"] for e in clients.endpoints(svc)] == [URL]
    assert_not_accused(edge.judge(), UNSAFE)
