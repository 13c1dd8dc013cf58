"""The tutorial's example pack (examples/tiny-pack) installs into a fresh virtual environment and
runs there: `theorycheck packs --json` lists it, `verify --pack tiny` and `prove --pack tiny`
give verdicts (the CI check of docs/writing-a-pack.md)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_tiny_pack_installs_and_runs(tmp_path):
    venv = tmp_path / "venv"
    # --without-pip: the venv then uses the system's pip and setuptools (a venv's bundled setuptools may be
    # too old to build a wheel without the `wheel` package, and --no-index cannot fetch one)
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)], check=True,
                   timeout=120)
    py = venv / "bin" / "python"
    # the example is built from a copy: setuptools writes build/ and *.egg-info beside the sources
    src = tmp_path / "tiny-pack"
    subprocess.run(["cp", "-r", str(ROOT / "examples" / "tiny-pack"), str(src)], check=True)
    r = subprocess.run([str(py), "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index", "-q",
                        str(src)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # this checkout's theorycheck, the venv's tiny_pack

    def tc(*args):
        return subprocess.run([str(py), "-m", "theorycheck", *args], capture_output=True, text=True, env=env,
                              cwd=tmp_path, timeout=600)

    r = tc("packs", "--json")
    assert r.returncode == 0, r.stderr
    rows = {p["name"]: p for p in json.loads(r.stdout)["packs"]}
    assert set(rows) >= {"minor-first", "kernel-rich", "lp-margin", "tiny"}
    assert rows["tiny"]["theorems"] == 1 and rows["tiny"]["claims"] == 1
    r = tc("verify", "--pack", "tiny", "--examples", "4", "--json", "-")
    assert r.returncode == 0, r.stdout + r.stderr
    (v,) = json.loads(r.stdout)["claims"]
    assert v["key"] == "tiny.interpolates" and v["status"] == "holds" and v["pack"] == "tiny" and v["tried"] == 5
    r = tc("prove", "--pack", "tiny", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["theorems"][0]["status"] == "verified"
