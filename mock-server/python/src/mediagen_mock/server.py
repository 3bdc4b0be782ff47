"""Starting the `mediagen-mock` binary and driving it through its control API."""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Literal

from .deprecated import DeprecatedNames
from .errors import MockError, MockStartError

__all__ = ["ApiKey", "ControlApi", "EventStream", "MockServer", "User", "World", "find_binary"]

Clock = Literal["real", "manual"]
Responses = Literal["full", "minimal", "extra"]
Scope = Literal["full", "read_only"]
Outcome = Literal["succeed", "fail"]
ModelState = Literal[
    "available", "disabled", "withdrawn", "circuit_open", "margin_guard", "pricing_missing"
]
FaultEffect = Literal["error", "delay", "drop", "drop_after"]

BINARY_ENV = "MEDIAGEN_MOCK_BIN"
_EXE = "mediagen-mock.exe" if os.name == "nt" else "mediagen-mock"
_LISTENING = "mediagen-mock listening on "
_DEMO_KEY = "demo API key: "

# Calls to the mock go to 127.0.0.1 only: an HTTP(S)_PROXY in the environment
# must not send them elsewhere.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def find_binary() -> str:
    """The path of the `mediagen-mock` binary.

    In order: the environment variable `MEDIAGEN_MOCK_BIN`; the scripts folder
    of the running interpreter (a virtual environment's `bin/` or `Scripts/`,
    where pip puts it); `PATH`.

    Raises `MockStartError` when none has it.
    """
    override = os.environ.get(BINARY_ENV)
    if override:
        if not Path(override).is_file():
            raise MockStartError(f"{BINARY_ENV}={override} is not a file")
        return override
    candidates = [Path(sys.executable).parent / _EXE]
    scripts = sysconfig.get_path("scripts")
    if scripts:
        candidates.append(Path(scripts) / _EXE)
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    found = shutil.which("mediagen-mock")
    if found:
        return found
    raise MockStartError(
        "mediagen-mock not found: install it (pip install ./mock-server/python) "
        f"or set {BINARY_ENV} to the binary's path"
    )


@dataclass(frozen=True)
class User:
    """A user of the mock, made by `MockServer.create_user`."""

    user_id: str
    """The user's id (a UUID), for the other control calls."""
    api_key: str
    """A full-scope API key: send it as `Authorization: Bearer <api_key>`."""
    email: str | None = None
    """The user's e-mail address."""
    balance_rub: float = 0.0
    """The balance the user was created with, in roubles."""


@dataclass(frozen=True)
class ApiKey:
    """A further key of a user, made by `MockServer.create_key`."""

    api_key: str
    """The whole key, to send as a bearer token."""
    public_part: str
    """The key's public part, which `MockServer.revoke_key` takes."""
    scope: str
    """`full`, or `read_only` (writes answer 403)."""


def _flag_names(args: Iterable[str]) -> set[str]:
    return {arg.split("=", 1)[0] for arg in args if arg.startswith("--")}


_UNSET: Any = object()


class ControlApi(DeprecatedNames):
    """The control API of one world of the mock (`{base_url}/_mock/...`).

    Its methods are the operations of the control contract
    (`openapi/mock-control.json`), one each, named by operationId, as the Rust
    and Node faces name them; `url`, `control`, `balance` and `verdict` are helpers. The
    names of 0.1.0 still answer, with a `DeprecationWarning`, until 0.3.0.
    """

    admin_token: str | None = None
    """Sent as `Authorization: Bearer <token>` on every control call: the
    server's admin token, or a world's own `control_token`."""

    @property
    def base_url(self) -> str:
        """The world's base URL (no slash at the end)."""
        raise NotImplementedError

    def url(self, path: str) -> str:
        """`base_url` joined with a path that starts with `/`."""
        return self.base_url + path

    def control(self, method: str, path: str, body: Mapping[str, Any] | None = None) -> Any:
        """Sends one control call and returns its JSON answer (None when empty).

        Raises `MockError` for an answer of 400 or above.
        """
        return _call(self.url(path), method, path, body, self.admin_token)

    def balance(self, user_id: str) -> float:
        """A user's available balance in roubles (reservations not counted)."""
        return float(self.get_user(user_id)["balanceRub"])

    # -- operations of the control contract ---------------------------------

    def get_clock(self) -> dict[str, Any]:
        """The clock: `now`, `mode` and `timeScale` (`GET /_mock/clock`)."""
        answer: dict[str, Any] = self.control("GET", "/_mock/clock")
        return answer

    def advance_clock(self, seconds: float) -> dict[str, Any]:
        """Moves the manual clock; what became due (task steps, deliveries) is
        applied before this returns (`POST /_mock/clock/advance`)."""
        answer: dict[str, Any] = self.control("POST", "/_mock/clock/advance", {"seconds": seconds})
        return answer

    def set_model_state(self, slug: str, state: ModelState) -> None:
        """Sets a model's state (`POST /_mock/models/{slug}/state`): `disabled`
        answers 403, `withdrawn` 410, `circuit_open` and `margin_guard` 503,
        `pricing_missing` 400 on create."""
        self.control("POST", f"/_mock/models/{_segment(slug)}/state", {"state": state})

    def force_outcome(
        self,
        user_id: str | None = None,
        model_slug: str | None = None,
        outcome: Outcome = "succeed",
        error_code: str | None = None,
        count: int = 1,
    ) -> None:
        """Makes the next `count` matching tasks end this way (`POST /_mock/outcomes`).

        `error_code` is a failure code of the service document, such as
        `content_policy` (final at once) or `timeout` (a provider error: three
        worker attempts, then `FAILED`). Absent filters match any user or model.
        """
        body: dict[str, Any] = {"outcome": outcome, "count": count}
        if user_id is not None:
            body["userId"] = user_id
        if model_slug is not None:
            body["modelSlug"] = model_slug
        if error_code is not None:
            body["errorCode"] = error_code
        self.control("POST", "/_mock/outcomes", body)

    def get_settings(self) -> dict[str, Any]:
        """`createLatencySeconds`, `autoPaySeconds` and `responses` (`GET /_mock/settings`)."""
        answer: dict[str, Any] = self.control("GET", "/_mock/settings")
        return answer

    def update_settings(
        self,
        *,
        create_latency_seconds: float | None = None,
        auto_pay_seconds: float | None = _UNSET,
        responses: Responses | None = None,
    ) -> dict[str, Any]:
        """Changes the settings given, from the next request on (`PUT /_mock/settings`).

        `create_latency_seconds`: how long a create with an `Idempotency-Key`
        takes on the clock, so a second request with the key sees 409.
        `auto_pay_seconds`: new top-ups pay themselves after that long; `None`
        leaves them waiting for `pay_topup`. `responses`: `full`, `minimal`
        (only what the service document guarantees) or `extra` (unknown
        members and a header added). Returns the settings now.
        """
        body: dict[str, Any] = {}
        if create_latency_seconds is not None:
            body["createLatencySeconds"] = create_latency_seconds
        if auto_pay_seconds is not _UNSET:
            body["autoPaySeconds"] = auto_pay_seconds
        if responses is not None:
            body["responses"] = responses
        answer: dict[str, Any] = self.control("PUT", "/_mock/settings", body)
        return answer

    def list_requests(self) -> list[dict[str, Any]]:
        """The request log of the service's routes, newest 10,000 (`GET /_mock/requests`)."""
        return _data(self.control("GET", "/_mock/requests"))

    def list_deliveries(self) -> list[dict[str, Any]]:
        """Every webhook message, oldest first, with its state, payload and
        attempts (`GET /_mock/deliveries`)."""
        return _data(self.control("GET", "/_mock/deliveries"))

    def create_delivery(self, endpoint_id: str, payload: dict[str, Any]) -> dict[str, Any]:
        """Queues an event body of yours (its `type` one the contract defines) as a
        webhook message to an endpoint, sent through the mock's own delivery path:
        signed, retried, in the journal and the verdict (`POST /_mock/deliveries`).
        An unknown endpoint raises `MockError` (404), a disabled one (409)."""
        answer: dict[str, Any] = self.control(
            "POST", "/_mock/deliveries", {"endpointId": endpoint_id, "payload": payload}
        )
        return answer

    def set_dns(self, host: str, addresses: Sequence[str]) -> None:
        """Makes a host name resolve to these addresses for webhook URLs (`PUT /_mock/dns`)."""
        self.control("PUT", "/_mock/dns", {"host": host, "addresses": list(addresses)})

    def list_outbox(self) -> list[dict[str, Any]]:
        """The magic-link e-mails the service would have sent (`GET /_mock/outbox`)."""
        return _data(self.control("GET", "/_mock/outbox"))

    def reset(self) -> None:
        """Empties everything; the demo user comes back with the same key (`POST /_mock/reset`)."""
        self.control("POST", "/_mock/reset")

    def create_user(self, balance_rub: float = 1000.0, email: str | None = None) -> User:
        """Creates a user with a balance (1000 RUB unless told, like the demo
        user) and a full-scope key (`POST /_mock/users`)."""
        body: dict[str, Any] = {"balanceRub": balance_rub}
        if email is not None:
            body["email"] = email
        answer = self.control("POST", "/_mock/users", body)
        return User(
            user_id=answer["userId"],
            api_key=answer["apiKey"],
            email=answer.get("email"),
            balance_rub=float(answer.get("balanceRub", balance_rub)),
        )

    def get_user(self, user_id: str) -> dict[str, Any]:
        """A user's state: `balanceRub`, `reservedRub`, `activeGenerations`, `keys`, ...
        (`GET /_mock/users/{id}`)."""
        answer: dict[str, Any] = self.control("GET", f"/_mock/users/{_segment(user_id)}")
        return answer

    def create_key(self, user_id: str, scope: Scope = "full") -> ApiKey:
        """Issues a further key to a user (`POST /_mock/users/{id}/keys`)."""
        answer = self.control("POST", f"/_mock/users/{_segment(user_id)}/keys", {"scope": scope})
        return ApiKey(
            api_key=answer["apiKey"],
            public_part=answer["publicPart"],
            scope=answer.get("scope", scope),
        )

    def set_balance(self, user_id: str, rub: float) -> None:
        """Sets a user's available balance (`PUT /_mock/users/{id}/balance`)."""
        self.control("PUT", f"/_mock/users/{_segment(user_id)}/balance", {"balanceRub": rub})

    def revoke_key(self, public_part: str) -> None:
        """Revokes a key; it answers 401 afterwards (`DELETE /_mock/keys/{publicPart}`)."""
        self.control("DELETE", f"/_mock/keys/{_segment(public_part)}")

    def inject_fault(
        self,
        effect: FaultEffect,
        *,
        method: str | None = None,
        path: str | None = None,
        user_id: str | None = None,
        count: int = 1,
        status: int | None = None,
        code: str | None = None,
        message: str | None = None,
        delay_seconds: float | None = None,
    ) -> dict[str, Any]:
        """Makes the next `count` matching requests fail (`POST /_mock/faults`).

        `effect` is `error` (answer `status` with the envelope's `code` and
        `message`), `delay` (answer after `delay_seconds`), `drop` (close the
        connection before acting) or `drop_after` (act, then close the
        connection). Absent `method`, `path` and `user_id` match any request.
        Returns the fault with its `id` and `remaining` count.
        """
        body: dict[str, Any] = {"effect": effect, "count": count}
        optional = {
            "method": method,
            "path": path,
            "userId": user_id,
            "status": status,
            "code": code,
            "message": message,
            "delaySeconds": delay_seconds,
        }
        body.update({k: v for k, v in optional.items() if v is not None})
        answer: dict[str, Any] = self.control("POST", "/_mock/faults", body)
        return answer

    def list_faults(self) -> list[dict[str, Any]]:
        """The faults still waiting (`GET /_mock/faults`)."""
        return _data(self.control("GET", "/_mock/faults"))

    def clear_faults(self) -> None:
        """Removes every fault (`DELETE /_mock/faults`)."""
        self.control("DELETE", "/_mock/faults")

    def remove_fault(self, fault_id: str) -> None:
        """Removes one fault (`DELETE /_mock/faults/{id}`)."""
        self.control("DELETE", f"/_mock/faults/{_segment(str(fault_id))}")

    def pay_invoice(self, invoice_id: str) -> dict[str, Any]:
        """Marks an invoice paid, as the bank transfer would (`POST /_mock/invoices/{id}/pay`)."""
        answer: dict[str, Any] = self.control("POST", f"/_mock/invoices/{_segment(invoice_id)}/pay")
        return answer

    def pay_topup(self, topup_id: str) -> dict[str, Any]:
        """The user pays a PENDING top-up on its payment page: it becomes
        SUCCEEDED and the balance is credited (`POST /_mock/topups/{id}/pay`)."""
        answer: dict[str, Any] = self.control("POST", f"/_mock/topups/{_segment(topup_id)}/pay")
        return answer

    def fail_topup(self, topup_id: str) -> dict[str, Any]:
        """The card payment of a PENDING top-up is declined: it becomes FAILED,
        nothing is credited (`POST /_mock/topups/{id}/fail`)."""
        answer: dict[str, Any] = self.control("POST", f"/_mock/topups/{_segment(topup_id)}/fail")
        return answer

    def stream_events(self, timeout: float = 30.0) -> EventStream:
        """The world's live journal from now on (`GET /_mock/events`): see `EventStream`."""
        return EventStream(self.url("/_mock/events"), self.admin_token, timeout)

    def get_snapshot(self) -> dict[str, Any]:
        """The world's whole state as one JSON document, to keep as a fixture
        (`GET /_mock/snapshot`)."""
        answer: dict[str, Any] = self.control("GET", "/_mock/snapshot")
        return answer

    def put_snapshot(self, snapshot: Mapping[str, Any]) -> None:
        """Replaces the world's state with a snapshot; a broken one raises
        `MockError` (400) and changes nothing (`PUT /_mock/snapshot`)."""
        self.control("PUT", "/_mock/snapshot", snapshot)

    def get_verdict(self, strict: str | Iterable[str] | None = None) -> dict[str, Any]:
        """The verdict on the world's client (`GET /_mock/verdict`): `clean`,
        `findings` (each with `rule`, `severity`, `message`, `documentRule`,
        `advice`, `requestIds`, `firstAt`, `count`, `fails`; a receiver's also
        `endpoint` and `messageIds`) and `checked` (`requests`, `deliveries`).

        `clean` is false when a finding is a violation. `strict` names rules of
        advice that spoil it as well, such as `["poll-rate",
        "read-after-final"]` (or the string `"poll-rate,read-after-final"`),
        sent as `?strict=poll-rate,read-after-final`; each finding's `fails`
        tells whether it spoils `clean` under that choice. An id the mock does
        not know raises `MockError` (400 `VALIDATION_ERROR`), whose message
        lists the ids it knows.
        """
        answer: dict[str, Any] = self.control("GET", "/_mock/verdict" + _strict_query(strict))
        return answer

    def verdict(self, strict: str | Iterable[str] | None = None) -> dict[str, Any]:
        """The verdict on the world's client: the same as `get_verdict(strict)`."""
        return self.get_verdict(strict)

    def reset_verdict(self) -> None:
        """Starts the verdict over, for tests that share a world (`DELETE /_mock/verdict`)."""
        self.control("DELETE", "/_mock/verdict")

    def probe_webhooks(self, endpoint_id: str) -> dict[str, Any]:
        """Sends three probes to a webhook endpoint (a wrong signature, a
        10-minute-old timestamp, a repeat of an acknowledged message) and
        returns each one's outcome; the findings go into the verdict
        (`POST /_mock/probes/webhooks`). An unknown endpoint raises `MockError` (404)."""
        answer: dict[str, Any] = self.control(
            "POST", "/_mock/probes/webhooks", {"endpointId": endpoint_id}
        )
        return answer


class EventStream:
    """A world's live journal, read as it happens (`GET /_mock/events`).

    Iterate it for one dict per event: `seq`, `at` (the mock's clock), `type`
    (`request`, `fault`, `generation`, `ledger`, `message`, `attempt`,
    `topup`, `invoice`, `mail`, `clock`, `reset`, `verdict.finding`, `verdict.reset`, and any
    the mock adds later)
    and the ids that tie events together (`requestId`, `userId`,
    `generationId`, `messageId`). A reader that fell behind gets
    `{"type": "lagged", "missed": n}`. The stream is open from the moment this
    object exists, so nothing that happens after is missed; close it (or use
    it as a context manager) when done. A read waits at most `timeout`
    seconds (an idle stream sends a keep-alive every 15 s).
    """

    def __init__(self, url: str, admin_token: str | None, timeout: float) -> None:
        headers = {"Accept": "text/event-stream"}
        if admin_token is not None:
            headers["Authorization"] = f"Bearer {admin_token}"
        request = urllib.request.Request(url, headers=headers)
        try:
            self._answer = _OPENER.open(request, timeout=timeout)
        except urllib.error.HTTPError as error:
            raise _mock_error(error, "GET", "/_mock/events") from None

    def __iter__(self) -> Iterator[dict[str, Any]]:
        data: list[str] = []
        for raw in self._answer:
            line = raw.decode("utf-8").rstrip("\r\n")
            if line.startswith("data:"):
                data.append(line[len("data:") :].lstrip())
            elif not line and data:
                event: dict[str, Any] = json.loads("\n".join(data))
                data = []
                yield event

    def close(self) -> None:
        """Ends the stream."""
        self._answer.close()

    def __enter__(self) -> EventStream:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


class World(ControlApi):
    """One world of a mock server: isolated from every other (its own users,
    clock, faults, settings, request log, deliveries), made by
    `MockServer.create_world`. `base_url` and `api_key` are all a client needs.

    With an admin token, the mock gives each world a `control_token` of its
    own, which this object sends on its control calls and `delete()` in place
    of the admin token: one that leaks reaches this world alone.
    """

    def __init__(
        self,
        server: MockServer,
        world_id: str,
        base_url: str,
        api_key: str | None,
        control_token: str | None = None,
    ) -> None:
        self.server = server
        self.id = world_id
        self._base_url = base_url
        self._api_key = api_key
        self._control_token = control_token
        self.admin_token = control_token or server.admin_token

    @property
    def control_token(self) -> str | None:
        """The world's own control token (`controlToken` of `POST /_mock/worlds`):
        its control routes and its `DELETE /_mock/worlds/{id}` accept it, no
        other world's do. None when the mock runs without an admin token."""
        return self._control_token

    @property
    def base_url(self) -> str:
        """The world's base URL: the whole service, and its control API under `/_mock`."""
        return self._base_url

    @property
    def api_key(self) -> str:
        """The world's demo user's API key."""
        if self._api_key is None:
            raise RuntimeError("this world was made without a demo user")
        return self._api_key

    def delete(self) -> None:
        """Ends the world and frees its memory (`DELETE /_mock/worlds/{id}` on
        the server, with the world's own token)."""
        path = f"/_mock/worlds/{_segment(self.id)}"
        _call(self.server.url(path), "DELETE", path, None, self.admin_token)

    def __repr__(self) -> str:
        return f"World(id={self.id!r}, base_url={self._base_url!r})"


class MockServer(ControlApi):
    """The mock of the media generation service, as a process on 127.0.0.1.

    Use it as a context manager, or call `start()` and `stop()`::

        with MockServer() as mock:
            user = mock.create_user(balance_rub=500)
            # point your code at mock.base_url with user.api_key, then:
            mock.advance_clock(30)  # thirty seconds pass for tasks and limits

    The clock is manual by default: time moves only through `advance_clock`, so a
    test decides when a task finishes. Each option maps to a flag of the
    binary (`mediagen-mock --help`); `extra_args` are passed as they are, and
    a flag given there replaces the one this class would pass.

    Args:
        clock: `"manual"` (time moves only through `advance_clock`) or `"real"`.
        time_scale: with the real clock, how many times faster than wall time.
        rate_limits: enforce the service's limits, or only report them in the
            `x-ratelimit-*` headers.
        allow_private_webhooks: let webhook endpoints point at 127.0.0.1 and
            private addresses (receivers in the test process).
        responses: the binary's `--responses` mode (`"full"`, `"minimal"` or
            `"extra"`); passed only when it is not `"full"`, so a binary
            without the flag still starts.
        admin_token: a token the control API requires; sent by this class on
            every control call.
        extra_args: further flags of the binary.
        binary: the binary to run (default: `find_binary()`).
        start_timeout: seconds to wait for the address and for `/health`.
        stop_timeout: seconds between SIGTERM and kill in `stop()`.
        env: the process's environment (default: this process's).
    """

    def __init__(
        self,
        clock: Clock = "manual",
        time_scale: float | None = None,
        rate_limits: bool = True,
        allow_private_webhooks: bool = False,
        responses: Responses = "full",
        admin_token: str | None = None,
        extra_args: Sequence[str] = (),
        *,
        binary: str | None = None,
        start_timeout: float = 30.0,
        stop_timeout: float = 10.0,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.clock_mode = clock
        self.time_scale = time_scale
        self.rate_limits = rate_limits
        self.allow_private_webhooks = allow_private_webhooks
        self.responses = responses
        self.admin_token = admin_token
        self.extra_args: tuple[str, ...] = tuple(extra_args)
        self.binary = binary
        self.start_timeout = start_timeout
        self.stop_timeout = stop_timeout
        self.env = dict(env) if env is not None else None
        self._process: subprocess.Popen[str] | None = None
        self._stderr: IO[bytes] | None = None
        self._base_url: str | None = None
        self._api_key: str | None = None
        self._reader: threading.Thread | None = None
        # Made by `connect`: the process is someone else's to start and stop.
        self._connected = False

    # -- the process ---------------------------------------------------------

    def command(self) -> list[str]:
        """The command line `start()` runs."""
        own: list[tuple[str, str | None]] = [
            ("--listen", "127.0.0.1:0"),
            ("--clock", self.clock_mode),
            ("--rate-limits", "on" if self.rate_limits else "off"),
        ]
        if self.time_scale is not None:
            own.append(("--time-scale", repr(float(self.time_scale))))
        if self.allow_private_webhooks:
            own.append(("--allow-private-webhooks", "true"))
        if self.admin_token is not None:
            own.append(("--admin-token", self.admin_token))
        # Older binaries have no --responses; "full" is their only behaviour.
        if self.responses != "full":
            own.append(("--responses", self.responses))
        given = _flag_names(self.extra_args)
        args = [self.binary or find_binary()]
        for flag, value in own:
            if flag not in given:
                args.append(flag if value is None else f"{flag}={value}")
        args.extend(self.extra_args)
        return args

    def start(self) -> MockServer:
        """Starts the binary on a free port of 127.0.0.1 and waits until it answers.

        Raises `MockStartError` (with the process's stderr) when it does not
        come up within `start_timeout` seconds.
        """
        if self._connected:
            return self
        if self._process is not None:
            raise RuntimeError("the mock server is already running")
        command = self.command()
        # The process writes its log straight into this file, and stderr() reads it.
        self._stderr = tempfile.TemporaryFile()
        try:
            process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                env=self.env,
                text=True,
                encoding="utf-8",
                errors="replace",
            )
        except OSError as error:
            self._close_stderr()
            raise MockStartError(f"could not run {command[0]}: {error}") from error
        self._process = process
        try:
            self._await_banner(process)
            self._await_health()
        except BaseException:
            self.stop()
            raise
        return self

    def _await_banner(self, process: subprocess.Popen[str]) -> None:
        lines: queue.Queue[str | None] = queue.Queue()

        def read() -> None:
            # Reads stdout to the end, so the process never blocks on a full pipe.
            assert process.stdout is not None
            for line in process.stdout:
                lines.put(line.rstrip("\r\n"))
            lines.put(None)

        self._reader = threading.Thread(target=read, name="mediagen-mock-stdout", daemon=True)
        self._reader.start()
        deadline = time.monotonic() + self.start_timeout
        while self._base_url is None or self._api_key is None:
            try:
                line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise MockStartError(
                    f"mediagen-mock printed no address within {self.start_timeout} s",
                    self.stderr(),
                ) from None
            if line is None:
                code = process.wait()
                raise MockStartError(f"mediagen-mock exited with code {code}", self.stderr())
            if line.startswith(_LISTENING):
                self._base_url = line[len(_LISTENING) :].strip().rstrip("/")
            elif line.startswith(_DEMO_KEY):
                self._api_key = line[len(_DEMO_KEY) :].strip()

    def _await_health(self) -> None:
        deadline = time.monotonic() + self.start_timeout
        while True:
            try:
                with _OPENER.open(self.url("/health"), timeout=2) as answer:
                    if answer.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            if self._process is not None and self._process.poll() is not None:
                raise MockStartError(
                    f"mediagen-mock exited with code {self._process.returncode}", self.stderr()
                )
            if time.monotonic() > deadline:
                raise MockStartError(
                    f"GET /health did not answer 200 within {self.start_timeout} s", self.stderr()
                )
            time.sleep(0.05)

    def stop(self) -> None:
        """Stops the process: SIGTERM, then kill after `stop_timeout` seconds.

        Does nothing when it is not running, or was made by `connect`.
        """
        if self._connected:
            return
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            if os.name == "nt":
                process.terminate()
            else:
                process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=self.stop_timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.join(timeout=self.stop_timeout)
        if process is not None and process.stdout is not None and not _reader_alive(reader):
            process.stdout.close()
        self._close_stderr()
        self._base_url = None
        self._api_key = None

    def _close_stderr(self) -> None:
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    @property
    def running(self) -> bool:
        """Whether the process is up."""
        if self._connected:
            return True
        return self._process is not None and self._process.poll() is None

    @property
    def pid(self) -> int | None:
        """The process id, while it runs."""
        return self._process.pid if self._process is not None else None

    def stderr(self) -> str:
        """What the process has written to stderr so far (its log)."""
        if self._stderr is None:
            return ""
        fd = self._stderr.fileno()
        if not hasattr(os, "pread"):  # Windows: no positional read
            self._stderr.seek(0)
            data = self._stderr.read()
            self._stderr.seek(0, os.SEEK_END)
            return data.decode("utf-8", errors="replace")
        # The process shares the file's offset, so read without moving it.
        chunks = []
        offset = 0
        while chunk := os.pread(fd, 1 << 16, offset):
            chunks.append(chunk)
            offset += len(chunk)
        return b"".join(chunks).decode("utf-8", errors="replace")

    def __enter__(self) -> MockServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"MockServer(base_url={self._base_url!r}, running={self.running})"

    # -- where it is ---------------------------------------------------------

    @property
    def base_url(self) -> str:
        """The service's base URL, such as `http://127.0.0.1:40193` (no slash at the end)."""
        if self._base_url is None:
            raise RuntimeError("the mock server is not running: call start() first")
        return self._base_url

    @property
    def api_key(self) -> str:
        """The demo user's API key (the same after `reset()`)."""
        if self._api_key is None:
            raise RuntimeError(
                "no demo key: the mock server is not running (call start() first), "
                "or was connected to without one"
            )
        return self._api_key

    # -- worlds (the root only) ----------------------------------------------

    @classmethod
    def connect(
        cls, base_url: str, api_key: str | None = None, admin_token: str | None = None
    ) -> MockServer:
        """A mock that runs already (a CI service, a shared instance): no
        process is started or stopped, the calls go to `base_url`."""
        server = cls(admin_token=admin_token)
        server._base_url = base_url.rstrip("/")
        server._api_key = api_key
        server._connected = True
        return server

    def create_world(
        self,
        *,
        clock: Clock | None = None,
        time_scale: float | None = None,
        responses: Responses | None = None,
        rate_limits: bool | None = None,
        demo_user: bool | None = None,
        demo_balance_rub: float | None = None,
    ) -> World:
        """A new world on this server, with the settings given over the
        server's own (`POST /_mock/worlds`)."""
        settings = {
            "clock": clock,
            "timeScale": time_scale,
            "responses": responses,
            "rateLimits": rate_limits,
            "demoUser": demo_user,
            "demoBalanceRub": demo_balance_rub,
        }
        body = {k: v for k, v in settings.items() if v is not None}
        answer = self.control("POST", "/_mock/worlds", body)
        return World(
            self,
            answer["id"],
            answer["baseUrl"],
            answer.get("demoApiKey"),
            answer.get("controlToken"),
        )

    def list_worlds(self) -> list[dict[str, Any]]:
        """The worlds beside the root: `id`, `baseUrl`, `createdAt` (`GET /_mock/worlds`)."""
        return _data(self.control("GET", "/_mock/worlds"))

    def delete_world(self, world_id: str) -> None:
        """Ends a world (`DELETE /_mock/worlds/{id}`)."""
        self.control("DELETE", f"/_mock/worlds/{_segment(world_id)}")


def _call(
    url: str, method: str, path: str, body: Mapping[str, Any] | None, admin_token: str | None
) -> Any:
    data = None
    headers = {"Accept": "application/json"}
    if body is not None:
        data = json.dumps(body).encode("utf-8")
        headers["Content-Type"] = "application/json"
    if admin_token is not None:
        headers["Authorization"] = f"Bearer {admin_token}"
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with _OPENER.open(request, timeout=30) as answer:
            raw = answer.read()
    except urllib.error.HTTPError as error:
        raise _mock_error(error, method, path) from None
    return json.loads(raw) if raw.strip() else None


def _mock_error(error: urllib.error.HTTPError, method: str, path: str) -> MockError:
    text = error.read().decode("utf-8", errors="replace")
    error.close()
    try:
        envelope = json.loads(text)
    except ValueError:
        envelope = None
    return MockError(
        method, path, error.code, envelope if isinstance(envelope, dict) else None, text
    )


def _reader_alive(reader: threading.Thread | None) -> bool:
    return reader is not None and reader.is_alive()


def _segment(value: str) -> str:
    return urllib.parse.quote(value, safe="")


def _strict_rules(strict: str | Iterable[str] | None) -> list[str]:
    """The rule ids of a strict choice: a string is a comma-separated list, as
    the `strict` query parameter takes it; blanks and repeats are dropped."""
    if strict is None:
        return []
    parts = strict.split(",") if isinstance(strict, str) else [str(rule) for rule in strict]
    return list(dict.fromkeys(rule.strip() for rule in parts if rule.strip()))


def _strict_query(strict: str | Iterable[str] | None) -> str:
    rules = _strict_rules(strict)
    return "?strict=" + urllib.parse.quote(",".join(rules), safe=",") if rules else ""


def _data(answer: Any) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = answer["data"]
    return data
