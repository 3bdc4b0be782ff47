"""The test README.md shows passes as it is written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_readme_fixture_example_passes(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    example = next(block for block in blocks if "def test_" in block)
    for name in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)  # the example's urllib talks to 127.0.0.1
    pytester.makepyfile(test_readme_example=example)
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=1)
