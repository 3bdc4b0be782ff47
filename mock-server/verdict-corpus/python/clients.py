"""Clients of the media generation service, written from its document alone.

Each strategy is a small function over plain HTTP (the standard library's
`http.client`), as an outside integrator would write it from the service
document: a base URL, an API key, and nothing of the mock.
Waiting is a `sleep(seconds)` the caller passes in: in production
`time.sleep`, in the corpus a move of the mock's manual clock. Random
strategies take a `random.Random`, so a run is fixed by its seed.

Some strategies here are wrong on purpose (marked BUGGY): the verdict must
name them. The others follow the document and must not be accused.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import http.client
import json
import random
import socket
import time
import urllib.parse
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from threading import Lock, Thread
from typing import Any

Sleep = Callable[[float], None]
Waits = Callable[[random.Random], Iterator[float]]

FINAL_STATUSES = {"SUCCEEDED", "FAILED"}


# -- plain HTTP ----------------------------------------------------------------


class Dropped(Exception):
    """No answer: the connection closed, or the time-out passed, before one came."""


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        try:
            return json.loads(self.body) if self.body else None
        except ValueError:
            return None

    @property
    def code(self) -> str | None:
        """`error.code` of the document's error envelope."""
        body = self.json
        if isinstance(body, dict) and isinstance(body.get("error"), dict):
            code = body["error"].get("code")
            return code if isinstance(code, str) else None
        return None

    @property
    def retry_after(self) -> float | None:
        """Limits, rule 3: `retry-after` in seconds (windowed limits only)."""
        value = self.headers.get("retry-after")
        try:
            return float(value) if value is not None else None
        except ValueError:
            return None


class Service:
    """One client's connection to `{base_url}` with `Authorization: Bearer <key>`."""

    def __init__(self, base_url: str, api_key: str, timeout: float = 30.0) -> None:
        parts = urllib.parse.urlsplit(base_url)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 80
        self.prefix = parts.path.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout
        self._connection: http.client.HTTPConnection | None = None
        self.sent: list[float] = []
        """When each request went out (time.monotonic()), for a caller that
        wants to know the pace it really kept."""

    def send(
        self,
        method: str,
        path: str,
        body: Any = None,
        headers: dict[str, str] | None = None,
        timeout: float | None = None,
    ) -> Answer:
        """One request; raises `Dropped` when no answer came."""
        all_headers = {"Authorization": f"Bearer {self.api_key}", "Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            all_headers["Content-Type"] = "application/json"
        all_headers.update(headers or {})
        wait = timeout if timeout is not None else self.timeout
        if self._connection is None or timeout is not None:
            self.close()
            self._connection = http.client.HTTPConnection(self.host, self.port, timeout=wait)
        connection = self._connection
        self.sent.append(time.monotonic())
        try:
            connection.request(method, self.prefix + path, body=data, headers=all_headers)
            answer = connection.getresponse()
            raw = answer.read()
        except (http.client.HTTPException, OSError, socket.timeout) as error:
            self.close()
            raise Dropped(f"{method} {path}: {error!r}") from None
        if timeout is not None:
            self.close()
        return Answer(answer.status, {k.lower(): v for k, v in answer.getheaders()}, raw)

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None


def new_key() -> str:
    return str(uuid.uuid4())


# -- retry policies: the waits between attempts -------------------------------
# Limits, rule 5: "exponential delay with jitter, 1 s, 2 s, 4 s, 8 s, stop after
# 5 attempts". Each policy yields the wait before retry 1, 2, ...; when it is
# exhausted the client gives up.

BASES = (1.0, 2.0, 4.0, 8.0)


def full_jitter(rng: random.Random) -> Iterator[float]:
    """Each wait drawn uniformly from 0 up to 1, 2, 4, 8 s."""
    for base in BASES:
        yield rng.uniform(0.0, base)


def equal_jitter(rng: random.Random) -> Iterator[float]:
    """Each wait between half and all of 1, 2, 4, 8 s."""
    for base in BASES:
        yield base / 2 + rng.uniform(0.0, base / 2)


def decorrelated_jitter(rng: random.Random, cap: float = 20.0) -> Iterator[float]:
    """wait = min(cap, uniform(base, 3 * previous)), base 1 s."""
    previous = 1.0
    for _ in BASES:
        previous = min(cap, rng.uniform(1.0, previous * 3))
        yield previous


def exponential(rng: random.Random) -> Iterator[float]:
    """1, 2, 4, 8 s, no jitter."""
    yield from BASES


def fixed(seconds: float, retries: int = 4) -> Waits:
    def waits(rng: random.Random) -> Iterator[float]:
        for _ in range(retries):
            yield seconds

    return waits


def no_wait(rng: random.Random) -> Iterator[float]:
    """BUGGY: retries at once."""
    for _ in BASES:
        yield 0.0


def ten_retries_with_back_off(rng: random.Random) -> Iterator[float]:
    """BUGGY: good back-off, but 11 attempts where the document says 5."""
    for retry in range(10):
        base = min(30.0, 2.0**retry)
        yield base / 2 + rng.uniform(0.0, base / 2)


# -- retrying a request --------------------------------------------------------


def is_retryable(answer: Answer | None) -> bool:
    """Errors, Client handling 2: RATE_LIMIT_ERROR, SERVICE_UNAVAILABLE,
    GATEWAY_* (and BILLING_*: "retry with exponential delay"); and no answer."""
    if answer is None:
        return True
    code = answer.code or ""
    return code in ("RATE_LIMIT_ERROR", "SERVICE_UNAVAILABLE") or code.startswith(
        ("GATEWAY_", "BILLING_")
    )


def with_retries(
    send: Callable[[], Answer],
    sleep: Sleep,
    waits: Iterable[float],
    also: Callable[[Answer], bool] = lambda answer: False,
) -> Answer | None:
    """Sends until an answer that is not to be retried (nor `also` to be),
    waiting as told between attempts, and never less than `retry-after`
    (Limits, rule 3). Gives up when the waits run out: the last answer, or
    None when none came."""
    pending = iter(waits)
    while True:
        try:
            answer: Answer | None = send()
        except Dropped:
            answer = None
        if not is_retryable(answer) and not (answer is not None and also(answer)):
            return answer
        wait = next(pending, None)
        if wait is None:
            return answer
        if answer is not None and answer.retry_after is not None:
            wait = max(wait, answer.retry_after)
        sleep(wait)


def read_generation(
    svc: Service, sleep: Sleep, generation_id: str, waits: Iterable[float]
) -> Answer | None:
    """GET /v1/generations/:id, retried through errors the document says to retry."""
    return with_retries(lambda: svc.send("GET", f"/v1/generations/{generation_id}"), sleep, waits)


# -- creating a generation -----------------------------------------------------


def create(svc: Service, body: dict[str, Any], key: str | None) -> Answer:
    headers = {"Idempotency-Key": key} if key is not None else {}
    return svc.send("POST", "/v1/generations", body, headers)


def create_retrying_same_key(
    svc: Service,
    sleep: Sleep,
    body: dict[str, Any],
    waits: Iterable[float],
    timeout: float | None = None,
) -> Answer | None:
    """Rule 7 of the create: a re-send with the same Idempotency-Key returns the
    generation the first one made, if it made one; and 409 (rule 8) while the
    first is still being executed, which is waited out like a 503."""
    key = new_key()
    return with_retries(
        lambda: svc.send(
            "POST", "/v1/generations", body, {"Idempotency-Key": key}, timeout=timeout
        ),
        sleep,
        waits,
        also=lambda answer: answer.status == 409,
    )


def create_retrying_new_key(
    svc: Service,
    sleep: Sleep,
    body: dict[str, Any],
    waits: Iterable[float],
    timeout: float | None = None,
) -> Answer | None:
    """BUGGY: a fresh Idempotency-Key on every attempt, so a create that acted
    before its answer was lost acts again."""
    return with_retries(
        lambda: svc.send(
            "POST", "/v1/generations", body, {"Idempotency-Key": new_key()}, timeout=timeout
        ),
        sleep,
        waits,
    )


def create_without_key(svc: Service, body: dict[str, Any]) -> Answer:
    """BUGGY (advice): no Idempotency-Key at all."""
    return create(svc, body, None)


def create_repeating_unchanged(svc: Service, sleep: Sleep, body: dict[str, Any]) -> list[Answer]:
    """BUGGY: after a final error (400, 404) sends the very same request again."""
    key = new_key()
    first = create(svc, body, key)
    sleep(1.0)
    return [first, create(svc, body, key)]


def missing_properties(answer: Answer) -> list[str]:
    """Errors: `error.details.fields[]`, with `params.missingProperty`."""
    body = answer.json or {}
    fields = ((body.get("error") or {}).get("details") or {}).get("fields") or []
    return [
        f["params"]["missingProperty"]
        for f in fields
        if isinstance(f, dict)
        and isinstance(f.get("params"), dict)
        and "missingProperty" in f["params"]
    ]


def create_fixing_the_request(
    svc: Service,
    body: dict[str, Any],
    defaults: dict[str, Any],
    fallback_models: list[str],
) -> list[Answer]:
    """Client handling 3: after VALIDATION_ERROR, fix the parameters named by
    `details.fields[]`; after 404 for the model (rule 4) or MODEL_UNAVAILABLE /
    MODEL_NOT_AVAILABLE, choose another model. A changed request is a new
    operation, so it gets a new Idempotency-Key."""
    answers = []
    body = dict(body)
    models = list(fallback_models)
    for _ in range(3):
        answer = create(svc, body, new_key())
        answers.append(answer)
        if answer.status == 400 and answer.code == "VALIDATION_ERROR":
            missing = missing_properties(answer)
            if not missing or not all(name in defaults for name in missing):
                return answers
            body.update({name: defaults[name] for name in missing})
        elif answer.status in (403, 404, 410) and models:
            body["modelSlug"] = models.pop(0)
        else:
            return answers
    return answers


# -- polling -------------------------------------------------------------------


def generation_status(answer: Answer) -> str | None:
    body = answer.json
    return body.get("status") if isinstance(body, dict) else None


def poll(
    svc: Service,
    sleep: Sleep,
    generation_id: str,
    intervals: Iterator[float],
    max_reads: int = 10_000,
) -> list[Answer]:
    """Reads a generation until its status is final. Waits `next(intervals)`
    before each read; a 429's `retry-after` is waited out before going on."""
    answers = []
    for _ in range(max_reads):
        sleep(next(intervals))
        answer = svc.send("GET", f"/v1/generations/{generation_id}")
        answers.append(answer)
        if answer.status == 429:
            sleep(answer.retry_after if answer.retry_after is not None else 1.0)
            continue
        if generation_status(answer) in FINAL_STATUSES:
            break
    return answers


def every(seconds: float) -> Iterator[float]:
    while True:
        yield seconds


def ticker(rng: random.Random, period: float = 1.0, jitter: float = 0.1) -> Iterator[float]:
    """A fixed ticker, each read at its tick ± `jitter`: the waits vary between
    period - 2 jitter and period + 2 jitter, and average the period."""
    offset = 0.0
    while True:
        next_offset = rng.uniform(-jitter, jitter)
        yield period + next_offset - offset
        offset = next_offset


def poll_round_robin(svc: Service, sleep: Sleep, generation_ids: list[str], per_read: float) -> int:
    """Polls several active generations in turn, one read every `per_read`
    seconds, so each is read every `per_read * n` seconds (its share of the
    general limit, 60 a minute, when `per_read` is 1). Returns the reads."""
    reads = 0
    active = list(generation_ids)
    while active:
        for generation_id in list(active):
            sleep(per_read)
            answer = svc.send("GET", f"/v1/generations/{generation_id}")
            reads += 1
            if generation_status(answer) in FINAL_STATUSES:
                active.remove(generation_id)
    return reads


def reread_after_final(svc: Service, sleep: Sleep, generation_id: str, times: int = 5) -> None:
    """BUGGY (advice): polls at 1 Hz, then goes on reading a final generation."""
    poll(svc, sleep, generation_id, every(1.0))
    for _ in range(times):
        sleep(1.0)
        svc.send("GET", f"/v1/generations/{generation_id}")


# -- the concurrency limit -----------------------------------------------------


def is_concurrency_refusal(answer: Answer | None) -> bool:
    """Rule 5 of the create, Limits rule 4: 429 RATE_LIMIT_ERROR without retry-after."""
    return (
        answer is not None
        and answer.status == 429
        and answer.code == "RATE_LIMIT_ERROR"
        and answer.retry_after is None
    )


def start_batch(svc: Service, model: str, count: int) -> list[str]:
    """Creates `count` generations, each with its own key: a batch's start."""
    ids = []
    for n in range(count):
        answer = create(svc, {"modelSlug": model, "prompt": f"batch item {n}"}, new_key())
        assert answer.status == 202, (answer.status, answer.body)
        ids.append(answer.json["id"])
    return ids


def create_backing_off(
    svc: Service, sleep: Sleep, body: dict[str, Any], waits: Iterable[float]
) -> list[Answer]:
    """Creates with one key; after the concurrency 429 waits as told (no
    retry-after comes with it), giving up when the waits run out."""
    key = new_key()
    answers = [create(svc, body, key)]
    for wait in waits:
        if not is_concurrency_refusal(answers[-1]):
            break
        sleep(wait)
        answers.append(create(svc, body, key))
    return answers


def create_in_a_tight_loop(
    svc: Service, sleep: Sleep, body: dict[str, Any], tries: int = 20
) -> list[Answer]:
    """BUGGY: re-sends the refused create every 0.05 s."""
    return create_backing_off(svc, sleep, body, [0.05] * tries)


def create_when_a_task_ends(
    svc: Service,
    sleep: Sleep,
    body: dict[str, Any],
    own_tasks: list[str],
    early_retry: float | None = None,
) -> list[Answer]:
    """Limits, rule 4: "the client waits for one of its tasks to finish". Reads
    its own tasks in turn, one read a second (each at its share of the general
    limit), and creates again once one is final. With `early_retry`, first
    tries once more after that many seconds, in case a slot had just freed."""
    key = new_key()
    answers = [create(svc, body, key)]
    if not is_concurrency_refusal(answers[-1]):
        return answers
    if early_retry is not None:
        sleep(early_retry)
        answers.append(create(svc, body, key))
        if not is_concurrency_refusal(answers[-1]):
            return answers
    while True:
        for generation_id in own_tasks:
            sleep(1.0)
            answer = svc.send("GET", f"/v1/generations/{generation_id}")
            if generation_status(answer) in FINAL_STATUSES:
                answers.append(create(svc, body, key))
                return answers


# -- webhook endpoints: a POST that may act ------------------------------------


def endpoints(svc: Service) -> list[dict[str, Any]]:
    """GET /v1/webhook-endpoints. The wrapper shape of the list is not shown,
    so take a bare array, or the first array member of an object."""
    body = svc.send("GET", "/v1/webhook-endpoints").json
    if isinstance(body, list):
        return body
    if isinstance(body, dict):
        for value in body.values():
            if isinstance(value, list):
                return value
    return []


def add_endpoint_repeating(svc: Service, sleep: Sleep, url: str, wait: float) -> list[Answer]:
    """BUGGY: POST /v1/webhook-endpoints answered 503, sent again after `wait`
    without looking whether the first one took effect."""
    answers = []
    for _ in range(3):
        try:
            answers.append(svc.send("POST", "/v1/webhook-endpoints", {"url": url}))
        except Dropped:
            pass
        else:
            if answers[-1].status < 500:
                return answers
        sleep(wait)
    return answers


def add_endpoint_reading_first(svc: Service, sleep: Sleep, url: str) -> dict[str, Any] | None:
    """Errors, Client handling: a failed POST that may have acted is not sent
    again blindly. Wait, read the list; if the endpoint is there, its secret
    (shown once) was lost, so rotate it; if not, create it again."""
    for _ in range(3):
        try:
            answer = svc.send("POST", "/v1/webhook-endpoints", {"url": url})
        except Dropped:
            answer = None
        if answer is not None and answer.status < 500:
            return answer.json if answer.status == 201 else None
        sleep(1.0)
        existing = [e for e in endpoints(svc) if e.get("url") == url]
        if existing:
            rotated = svc.send("POST", f"/v1/webhook-endpoints/{existing[0]['id']}/rotate-secret")
            secret = (rotated.json or {}).get("secret")
            return {"id": existing[0]["id"], "url": url, "secret": secret}
    return None


# -- a webhook receiver (Events, Signature) ------------------------------------

TOLERANCE_SECONDS = 5 * 60


def signature_is_valid(secret: str, headers: dict[str, str], body: bytes) -> bool:
    """Signature rules 1 and 2: HMAC-SHA256 of `<id>.<timestamp>.<raw body>`,
    keyed by the base64-decoded secret after `whsec_`, base64; the header holds
    space-separated `v1,<signature>` entries, any of which may match."""
    message_id = headers.get("webhook-id")
    timestamp = headers.get("webhook-timestamp")
    signatures = headers.get("webhook-signature")
    if not message_id or not timestamp or not signatures:
        return False
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{message_id}.{timestamp}.".encode() + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest())
    for entry in signatures.split(" "):
        version, _, signature = entry.partition(",")
        if version == "v1" and hmac.compare_digest(signature.encode(), expected):
            return True
    return False


def timestamp_is_fresh(headers: dict[str, str], now: float) -> bool:
    """Signature rule 3: more than 5 minutes from our clock is invalid."""
    try:
        return abs(now - int(headers.get("webhook-timestamp", ""))) <= TOLERANCE_SECONDS
    except ValueError:
        return False


@dataclass
class ReceiverPolicy:
    check_signature: bool = True
    check_timestamp: bool = True
    refuse_duplicates: bool = False
    always: int | None = None


CORRECT = ReceiverPolicy()
NO_SIGNATURE_CHECK = ReceiverPolicy(check_signature=False, check_timestamp=False)
NO_TIMESTAMP_CHECK = ReceiverPolicy(check_timestamp=False)
REFUSES_DUPLICATES = ReceiverPolicy(refuse_duplicates=True)
ANSWERS_500 = ReceiverPolicy(always=500)


@dataclass
class Receiver:
    """An HTTP receiver on 127.0.0.1:<free port>; `secret` is set once the
    endpoint is created. Signature rule 4: answers 2xx at once and skips a
    `webhook-id` it has seen."""

    policy: ReceiverPolicy
    secret: str | None = None
    seen: set[str] = field(default_factory=set)
    handled: list[str] = field(default_factory=list)
    answered: list[int] = field(default_factory=list)
    lock: Lock = field(default_factory=Lock)

    def answer(self, headers: dict[str, str], body: bytes) -> int:
        policy = self.policy
        if policy.always is not None:
            return policy.always
        if policy.check_signature and not signature_is_valid(self.secret or "", headers, body):
            return 401
        if policy.check_timestamp and not timestamp_is_fresh(headers, time.time()):
            return 401
        message_id = headers.get("webhook-id", "")
        with self.lock:
            if message_id in self.seen:
                return 409 if policy.refuse_duplicates else 200
            self.seen.add(message_id)
            self.handled.append(message_id)
        return 200

    def __enter__(self) -> Receiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                headers = {k.lower(): v for k, v in self.headers.items()}
                status = receiver.answer(headers, body)
                with receiver.lock:
                    receiver.answered.append(status)
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/webhooks"

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def subscribe(svc: Service, receiver: Receiver) -> str:
    """POST /v1/webhook-endpoints for the receiver; keeps the secret shown once."""
    answer = svc.send(
        "POST",
        "/v1/webhook-endpoints",
        {"url": receiver.url, "eventTypes": ["generation.completed", "generation.failed"]},
    )
    assert answer.status == 201, (answer.status, answer.body)
    receiver.secret = answer.json["secret"]
    return str(answer.json["id"])
