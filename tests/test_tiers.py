"""The two tiers: every test the quick loop leaves out by name (``conftest.SLOW_IDS``) exists, so that a renamed
test cannot silently move back into the quick loop or out of it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_every_slow_id_names_a_collected_test():
    from conftest import SLOW_IDS

    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:randomly", "tests"],
                         cwd=ROOT, capture_output=True, text=True, timeout=600).stdout
    collected = {line.strip() for line in out.splitlines() if "::" in line}
    assert len(collected) > 1000, out[-2000:]
    assert sorted(SLOW_IDS - collected) == []
