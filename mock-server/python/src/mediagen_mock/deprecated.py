"""The names of 0.1.0 that the control contract renamed, kept for one release.

Each warns with a `DeprecationWarning` that names its replacement, then calls
it. They go in 0.3.0; see `CHANGELOG.md`. `ControlApi` inherits them, so a
`MockServer` and a `World` (what the `mediagen_mock` fixture gives) both answer
to them.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any, Protocol


class _Operations(Protocol):
    """The operations of `ControlApi` the old names call."""

    def get_clock(self) -> dict[str, Any]: ...

    def advance_clock(self, seconds: float) -> dict[str, Any]: ...

    def get_settings(self) -> dict[str, Any]: ...

    def update_settings(
        self,
        *,
        create_latency_seconds: float | None = ...,
        auto_pay_seconds: float | None = ...,
        responses: Any = ...,
    ) -> dict[str, Any]: ...

    def list_faults(self) -> list[dict[str, Any]]: ...

    def list_requests(self) -> list[dict[str, Any]]: ...

    def list_deliveries(self) -> list[dict[str, Any]]: ...

    def list_outbox(self) -> list[dict[str, Any]]: ...

    def set_dns(self, host: str, addresses: Sequence[str]) -> None: ...


def _moved(old: str, new: str) -> None:
    # stacklevel 3: the warning points at the caller of the old name.
    warnings.warn(
        f"{old} is deprecated and goes in mediagen-mock 0.3.0: use {new}",
        DeprecationWarning,
        stacklevel=3,
    )


class DeprecatedNames:
    """The control face's names of 0.1.0, each calling its replacement."""

    def advance(self: _Operations, seconds: float) -> dict[str, Any]:
        """Deprecated: `advance_clock(seconds)`."""
        _moved("advance(seconds)", "advance_clock(seconds)")
        return self.advance_clock(seconds)

    def clock(self: _Operations) -> dict[str, Any]:
        """Deprecated: `get_clock()`."""
        _moved("clock()", "get_clock()")
        return self.get_clock()

    def settings(self: _Operations) -> dict[str, Any]:
        """Deprecated: `get_settings()`."""
        _moved("settings()", "get_settings()")
        return self.get_settings()

    def set_create_latency(self: _Operations, seconds: float) -> dict[str, Any]:
        """Deprecated: `update_settings(create_latency_seconds=seconds)`."""
        _moved("set_create_latency(seconds)", "update_settings(create_latency_seconds=seconds)")
        return self.update_settings(create_latency_seconds=seconds)

    def set_responses(self: _Operations, responses: str) -> dict[str, Any]:
        """Deprecated: `update_settings(responses=responses)`."""
        _moved("set_responses(responses)", "update_settings(responses=responses)")
        return self.update_settings(responses=responses)

    def set_auto_pay(self: _Operations, seconds: float | None) -> dict[str, Any]:
        """Deprecated: `update_settings(auto_pay_seconds=seconds)`."""
        _moved("set_auto_pay(seconds)", "update_settings(auto_pay_seconds=seconds)")
        return self.update_settings(auto_pay_seconds=seconds)

    def faults(self: _Operations) -> list[dict[str, Any]]:
        """Deprecated: `list_faults()`."""
        _moved("faults()", "list_faults()")
        return self.list_faults()

    def requests(self: _Operations) -> list[dict[str, Any]]:
        """Deprecated: `list_requests()`."""
        _moved("requests()", "list_requests()")
        return self.list_requests()

    def deliveries(self: _Operations) -> list[dict[str, Any]]:
        """Deprecated: `list_deliveries()`."""
        _moved("deliveries()", "list_deliveries()")
        return self.list_deliveries()

    def outbox(self: _Operations) -> list[dict[str, Any]]:
        """Deprecated: `list_outbox()`."""
        _moved("outbox()", "list_outbox()")
        return self.list_outbox()

    def pin_dns(self: _Operations, host: str, addresses: Sequence[str]) -> None:
        """Deprecated: `set_dns(host, addresses)`."""
        _moved("pin_dns(host, addresses)", "set_dns(host, addresses)")
        self.set_dns(host, addresses)
