"""The corpus's side of the mock: worlds, users, faults, the manual clock and
the verdict, through the mock's documented control API (`mediagen_mock`).

The clients in `clients.py` know none of this: they get a `Service` (base
URL and key) and a `sleep` that moves the world's manual clock, so a wait of
d seconds is d "edge seconds" for the verdict and costs no real time.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import time
import urllib.parse
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from clients import Service
from mediagen_mock import World

RUNS = int(os.environ.get("VERDICT_CORPUS_RUNS", "1000"))
"""Seeded runs of each random strategy (seed = run index)."""

WORKERS = int(os.environ.get("VERDICT_CORPUS_WORKERS", "2"))
"""Threads the seeded runs are spread over, each in a world of its own."""


@dataclass
class Tally:
    """How often a strategy was accused over its seeded runs."""

    strategy: str
    rule: str
    runs: int = 0
    accused: int = 0
    examples: list[str] = field(default_factory=list)

    def line(self) -> str:
        rate = 100.0 * self.accused / self.runs if self.runs else 0.0
        return (
            f"{self.strategy}: {self.accused} accusations in {self.runs} runs"
            f" ({rate:.1f} %) [{self.rule}]"
        )


TALLIES: list[Tally] = []
"""Every tally of the session, printed at its end (conftest.py)."""


class Edge:
    """One world of the mock as the corpus drives it, over a kept-alive
    connection (a run is a few dozen calls; a fresh one each would cost more
    than the runs)."""

    def __init__(self, world: World, settings: dict[str, Any] | None = None) -> None:
        self.world = world
        self.settings = dict(settings or {})
        parts = urllib.parse.urlsplit(world.base_url)
        self._host = parts.hostname or "127.0.0.1"
        self._port = parts.port or 80
        self._prefix = parts.path.rstrip("/")
        self._connection = http.client.HTTPConnection(self._host, self._port, timeout=60)
        self.advanced = 0.0

    def control(self, method: str, path: str, body: Any = None) -> Any:
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if self.world.admin_token:
            headers["Authorization"] = f"Bearer {self.world.admin_token}"
        for attempt in range(2):
            try:
                self._connection.request(method, self._prefix + path, body=data, headers=headers)
                answer = self._connection.getresponse()
                raw = answer.read()
                break
            except (http.client.HTTPException, OSError):
                self._connection.close()
                self._connection = http.client.HTTPConnection(self._host, self._port, timeout=60)
                if attempt:
                    raise
        if answer.status >= 400:
            raise AssertionError(
                f"control {method} {path}: {answer.status} {raw.decode(errors='replace')}"
            )
        return json.loads(raw) if raw.strip() else None

    # -- what clients get ------------------------------------------------------

    def sleep(self, seconds: float) -> None:
        """A client's wait: one move of the manual clock by that many seconds."""
        if seconds > 0:
            self.control("POST", "/_mock/clock/advance", {"seconds": seconds})
            self.advanced += seconds

    def new_user(self, balance_rub: float = 5000.0) -> tuple[str, Service]:
        """A fresh user (a client of its own for the verdict) and its service."""
        user = self.control("POST", "/_mock/users", {"balanceRub": balance_rub})
        return user["userId"], Service(self.world.base_url, user["apiKey"])

    # -- levers ----------------------------------------------------------------

    def fault(self, effect: str, **rule: Any) -> dict[str, Any]:
        """POST /_mock/faults; keyword names are the contract's (userId, delaySeconds...)."""
        body = {"effect": effect, **{k: v for k, v in rule.items() if v is not None}}
        answer: dict[str, Any] = self.control("POST", "/_mock/faults", body)
        return answer

    def outage(self, method: str, path: str, user_id: str, count: int) -> None:
        """`count` answers of 503 SERVICE_UNAVAILABLE on one route for one user."""
        self.fault(
            "error",
            method=method,
            path=path,
            userId=user_id,
            count=count,
            status=503,
            code="SERVICE_UNAVAILABLE",
        )

    def user(self, user_id: str) -> dict[str, Any]:
        answer: dict[str, Any] = self.control("GET", f"/_mock/users/{user_id}")
        return answer

    # -- the verdict -----------------------------------------------------------

    def verdict(self) -> dict[str, Any]:
        answer: dict[str, Any] = self.control("GET", "/_mock/verdict")
        return answer

    def judge(self) -> list[dict[str, Any]]:
        """The findings since the last call; then the verdict starts over (each
        run is a fresh user, so an empty verdict needs no reset)."""
        findings: list[dict[str, Any]] = self.verdict()["findings"]
        if findings:
            self.control("DELETE", "/_mock/verdict")
        return findings

    def settle_deliveries(self, at_least: int, timeout: float = 15.0) -> list[dict[str, Any]]:
        """Waits (real time: the receiver is a real server) until `at_least`
        delivery attempts have ended."""
        deadline = time.monotonic() + timeout
        while True:
            deliveries = self.world.list_deliveries()
            ended = sum(len(d.get("attempts") or []) for d in deliveries)
            if ended >= at_least or time.monotonic() > deadline:
                return deliveries
            time.sleep(0.02)

    def sibling(self) -> Edge:
        """A new world with the same settings, for runs side by side."""
        return Edge(self.world.server.create_world(**self.settings), self.settings)

    def close(self) -> None:
        self._connection.close()


# -- judging -------------------------------------------------------------------


def describe(findings: list[dict[str, Any]]) -> str:
    if not findings:
        return "no findings"
    return "; ".join(f"{f['rule']} ({f['severity']}): {f['message']}" for f in findings)


def named(findings: list[dict[str, Any]], rule: str) -> list[dict[str, Any]]:
    return [f for f in findings if f["rule"] == rule]


def accusations(findings: list[dict[str, Any]], rule: str) -> list[dict[str, Any]]:
    """What accuses a correct client: a finding of the rule under test, or any violation."""
    return [f for f in findings if f["rule"] == rule or f["severity"] == "violation"]


def assert_named(findings: list[dict[str, Any]], rule: str) -> None:
    assert named(findings, rule), (
        f"expected {rule} to be named; the verdict said: {describe(findings)}"
    )


def steady(
    edge: Edge, scenario: Callable[[Edge], list[float]], tolerance: float = 0.015, tries: int = 10
) -> list[dict[str, Any]]:
    """The findings of a fixed-pace scenario, run (each time as a fresh user)
    until the client kept its pace at the edge. Real seconds add to a client's
    waits, and on a starved machine they make a fixed pace look as if it grew:
    a run counts only when the real gaps between the requests of its chain
    (the send times `scenario` returns) differ by at most `tolerance`."""
    spreads = []
    for _ in range(tries):
        sent = scenario(edge)
        findings = edge.judge()
        gaps = [b - a for a, b in zip(sent, sent[1:])]
        spreads.append(max(gaps) - min(gaps) if gaps else 0.0)
        if spreads[-1] <= tolerance:
            return findings
    raise AssertionError(
        f"the client never kept a fixed pace within {tolerance} s of real time in {tries} runs "
        f"(spreads {', '.join(f'{s:.3f}' for s in spreads)} s): the machine is too busy"
    )


def assert_not_named(findings: list[dict[str, Any]], rule: str) -> None:
    assert not named(findings, rule), f"expected no {rule}; the verdict said: {describe(findings)}"


def assert_not_accused(findings: list[dict[str, Any]], rule: str) -> None:
    wrong = accusations(findings, rule)
    assert not wrong, f"a correct client was accused: {describe(wrong)}"


def seeded(
    edge: Edge,
    strategy: str,
    rule: str,
    run: Callable[[Edge, random.Random, int], None],
    runs: int = RUNS,
) -> Tally:
    """Runs a correct strategy `runs` times (seed = run index), each as a fresh
    user with the verdict started over, and counts the runs it was accused in."""
    workers = max(1, min(WORKERS, runs))
    edges = [edge] + [edge.sibling() for _ in range(workers - 1)]

    def share(worker: int) -> list[tuple[int, list[dict[str, Any]]]]:
        mine = edges[worker]
        judged = []
        for seed in range(worker, runs, workers):
            run(mine, random.Random(seed), seed)
            judged.append((seed, accusations(mine.judge(), rule)))
        return judged

    try:
        with ThreadPoolExecutor(workers) as pool:
            results = sorted(r for rs in pool.map(share, range(workers)) for r in rs)
    finally:
        for other in edges[1:]:
            other.close()
            other.world.delete()
    tally = Tally(strategy, rule, runs=len(results))
    for seed, wrong in results:
        if wrong:
            tally.accused += 1
            if len(tally.examples) < 3:
                tally.examples.append(f"seed {seed}: {describe(wrong)}")
    TALLIES.append(tally)
    print(tally.line())
    return tally


def assert_never_accused(tally: Tally) -> None:
    assert tally.accused == 0, tally.line() + "\n" + "\n".join(tally.examples)
