"""The mediagen mock server for tests outside Rust.

Installing the `mediagen-mock` distribution (`pip install ./mock-server/python`
from a checkout, or a wheel built there) puts the `mediagen-mock` binary on
PATH and this package beside it: `MockServer` starts the binary on a free
port of 127.0.0.1 and drives its control API (users, the clock, forced
outcomes, faults, ...), and a pytest plugin gives every test a clean mock
through the `mediagen_mock` fixture::

    def test_generation_is_accepted(mediagen_mock):
        ...  # mediagen_mock.base_url, mediagen_mock.api_key, mediagen_mock.advance(30)
"""

from importlib.metadata import PackageNotFoundError, version

from .errors import MockError, MockStartError
from .server import ApiKey, ControlApi, EventStream, MockServer, User, World, find_binary

try:
    __version__ = version("mediagen-mock")
except PackageNotFoundError:  # imported from a source tree
    __version__ = "0+unknown"

__all__ = [
    "ApiKey",
    "ControlApi",
    "EventStream",
    "MockError",
    "MockServer",
    "MockStartError",
    "User",
    "World",
    "__version__",
    "find_binary",
]
