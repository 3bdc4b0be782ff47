"""Webhook receivers: `receiver-failed`, `receiver-accepts-bad-signature`,
`receiver-accepts-stale-timestamp`, `receiver-refuses-duplicate`.

Events, Signature (Standard Webhooks) rules 1 to 4; Delivery and retries, rule 1.
Each receiver gets a real delivery (a generation that ends) and then the
mock's three probes (`POST /_mock/probes/webhooks`).
"""

from __future__ import annotations

import pytest

import clients
from harness import Edge, assert_named, describe


def deliver_and_probe(
    edge: Edge, policy: clients.ReceiverPolicy
) -> tuple[clients.Receiver, dict, list[dict]]:
    with clients.Receiver(policy) as receiver:
        _, svc = edge.new_user()
        endpoint_id = clients.subscribe(svc, receiver)
        created = clients.create(
            svc, {"modelSlug": "flux-schnell", "prompt": "a postcard"}, clients.new_key()
        )
        assert created.status == 202
        edge.sleep(6.0)  # queued 1 s, made in 4 s: generation.completed is sent
        edge.settle_deliveries(at_least=1)
        report = edge.world.probe_webhooks(endpoint_id)
        return receiver, report, edge.judge()


def test_a_receiver_that_verifies_everything_passes_every_probe(edge: Edge) -> None:
    receiver, report, findings = deliver_and_probe(edge, clients.CORRECT)
    assert receiver.handled, "the real delivery was handled"
    assert all(p["passed"] for p in report["probes"]), report
    assert not findings, describe(findings)


BUGGY = {
    "no signature check": (clients.NO_SIGNATURE_CHECK, "receiver-accepts-bad-signature"),
    "no timestamp check": (clients.NO_TIMESTAMP_CHECK, "receiver-accepts-stale-timestamp"),
    "409 for a repeated webhook-id": (clients.REFUSES_DUPLICATES, "receiver-refuses-duplicate"),
    "500 for everything": (clients.ANSWERS_500, "receiver-failed"),
}


@pytest.mark.parametrize(("policy", "rule"), BUGGY.values(), ids=list(BUGGY))
def test_a_buggy_receiver_is_named(edge: Edge, policy: clients.ReceiverPolicy, rule: str) -> None:
    _, report, findings = deliver_and_probe(edge, policy)
    assert_named(findings, rule)


def test_a_receiver_that_checks_the_signature_is_not_named_for_it(edge: Edge) -> None:
    _, _, findings = deliver_and_probe(edge, clients.NO_TIMESTAMP_CHECK)
    assert not [f for f in findings if f["rule"] == "receiver-accepts-bad-signature"], describe(
        findings
    )
