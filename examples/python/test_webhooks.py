"""A webhook endpoint on a receiver in the test process; the delivery is verified
with the `standardwebhooks` library, as a receiver in production would."""

from __future__ import annotations

import http.server
import queue
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from helpers import create_generation, follow
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from mediagen_mock import World


class Receiver:
    """An HTTP server on 127.0.0.1 that keeps every POST it gets."""

    def __init__(self) -> None:
        self.received: queue.Queue[tuple[dict[str, str], bytes]] = queue.Queue()
        received = self.received

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                received.put(({k.lower(): v for k, v in self.headers.items()}, body))
                self.send_response(204)  # answer at once; work happens elsewhere
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with Receiver() as receiver:
        yield receiver


def test_a_completed_generation_is_delivered_signed(
    mediagen_mock: World, http: httpx.Client, receiver: Receiver
) -> None:
    registered = http.post("/v1/webhook-endpoints", json={"url": receiver.url})
    assert registered.status_code == 201, registered.text
    secret = registered.json()["secret"]

    created = create_generation(http, "flux-schnell", "a lighthouse")
    assert follow(mediagen_mock, http, created["id"])["status"] == "SUCCEEDED"

    headers, body = receiver.received.get(timeout=10)
    event = Webhook(secret).verify(body, headers)  # raises on a bad signature
    assert event["type"] == "generation.completed"
    assert event["data"]["generation"]["id"] == created["id"]
    assert event["data"]["generation"]["output_urls"]
    with pytest.raises(WebhookVerificationError):
        Webhook(secret).verify(body + b" ", headers)  # not the bytes that were signed

    [delivery] = mediagen_mock.list_deliveries()
    assert delivery["messageId"] == headers["webhook-id"]
