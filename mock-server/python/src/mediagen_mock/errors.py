"""The exceptions of `mediagen_mock`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["MockError", "MockStartError"]


class MockStartError(RuntimeError):
    """The `mediagen-mock` binary could not be found, or did not come up.

    `stderr` holds what the process wrote before it died or was given up on
    (empty when it never started).
    """

    def __init__(self, message: str, stderr: str = "") -> None:
        self.stderr = stderr
        text = message
        if stderr.strip():
            text = f"{message}\n--- mediagen-mock stderr ---\n{stderr.rstrip()}"
        super().__init__(text)


class MockError(Exception):
    """A call to the mock answered with an error status.

    The mock answers every error with the service's envelope
    `{"error": {"code", "message", "requestId", "timestamp", "details"?}}`;
    `envelope` keeps it whole, and the common fields are attributes.
    `code` and `message` are empty when the body was not an envelope.
    """

    def __init__(
        self,
        method: str,
        path: str,
        status: int,
        envelope: Mapping[str, Any] | None = None,
        body: str = "",
    ) -> None:
        self.method = method
        self.path = path
        self.status = status
        self.envelope: dict[str, Any] = dict(envelope) if envelope else {}
        self.body = body
        error = self.envelope.get("error")
        error = error if isinstance(error, dict) else {}
        self.code: str = str(error.get("code", ""))
        self.message: str = str(error.get("message", ""))
        self.request_id: str | None = error.get("requestId")
        self.details: dict[str, Any] | None = error.get("details")
        if self.code:
            text = f"{method} {path}: {status} {self.code}: {self.message}"
            if self.request_id:
                text += f" ({self.request_id})"
        else:
            text = f"{method} {path}: {status} {body[:200]}".rstrip()
        super().__init__(text)
