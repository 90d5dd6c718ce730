"""The docs' "No server at all" snippets (docs/in-process.md) run exactly as written (issue 18)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[1] / "docs" / "in-process.md"


def snippets() -> list[str]:
    text = PAGE.read_text(encoding="utf-8")
    section = text.split("\n## No server at all\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)


def test_the_section_shows_decorator_context_manager_and_fixture() -> None:
    found = snippets()
    assert len(found) == 3
    assert "@idv_mock.mock()" in found[0]
    assert "with idv_mock.mock(" in found[1] and "async with idv_mock.mock()" in found[1]
    assert "(idv_mocked)" in found[2]


def test_the_snippets_pass_as_tests(pytester: pytest.Pytester) -> None:
    for index, code in enumerate(snippets()):
        pytester.makepyfile(**{f"test_readme_{index}": code})
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=4)
