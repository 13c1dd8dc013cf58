"""A pack author's install: pytest comes with the extra ``theorycheck[pack]``, and ``pack_tests``
without pytest is a one-line error that says how to get it."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest

from theorycheck.errors import TheorycheckError

ROOT = Path(__file__).resolve().parents[1]


def test_the_pack_extra_brings_pytest():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert any(req.startswith("pytest") for req in extras["pack"])
    assert "theorycheck[pack]" in (ROOT / "docs" / "writing-a-pack.md").read_text(encoding="utf-8")


def test_pack_tests_without_pytest_says_what_to_install(monkeypatch):
    from theorycheck.testing import pack_tests

    monkeypatch.setitem(sys.modules, "pytest", None)  # `import pytest` raises ImportError
    with pytest.raises(TheorycheckError, match=r"theorycheck\[pack\]"):
        pack_tests("kernel-rich")
