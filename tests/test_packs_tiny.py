"""The tutorial's example pack (examples/tiny-pack) installs with pip, as a pack author's users
install it, and runs: `theorycheck packs --json` lists it, `verify --pack tiny` and `prove --pack
tiny` give verdicts (the CI check of docs/writing-a-pack.md).

It is built and installed by THIS interpreter's pip and setuptools (offline: --no-index, and
--no-build-isolation so that no build environment is fetched) into a folder of its own that the
runs put on sys.path. A nested venv made with ``python -m venv`` would take the *base*
interpreter's setuptools (a venv's ``sys.executable`` makes a venv of the base, not of itself),
which may be too old to build a wheel (``invalid command 'bdist_wheel'``), and it would not see
this environment's numpy or sympy at all."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_tiny_pack_installs_and_runs(tmp_path):
    py = sys.executable
    # the example is built from a copy: setuptools writes build/ and *.egg-info beside the sources
    src, site = tmp_path / "tiny-pack", tmp_path / "site"
    subprocess.run(["cp", "-r", str(ROOT / "examples" / "tiny-pack"), str(src)], check=True)
    r = subprocess.run([py, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index", "-q",
                        "--disable-pip-version-check", "--target", str(site), str(src)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    (dist,) = site.glob("theorycheck_tiny_pack-0.1.0.dist-info")
    assert "tiny = tiny_pack:PACK" in (dist / "entry_points.txt").read_text()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}  # the pack as installed, this checkout

    def tc(*args):
        return subprocess.run([py, "-m", "theorycheck", *args], capture_output=True, text=True, env=env,
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
    assert (v["pinned"], v["drawn"], v["requested"], v["cap"]) == (1, 4, 4, None)
    # the claim's own cap (max_examples=10) is below what --examples 50 asks for: the output says what was drawn
    r = tc("verify", "--pack", "tiny", "--examples", "50")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "1 claim, up to 50 drawn inputs each" in r.stdout and "1 claims" not in r.stdout
    assert "tiny.interpolates draws at most 10 inputs, its own cap (max_examples; 50 requested): 11 tried = " \
           "1 pinned + 10 drawn." in r.stdout
    r = tc("prove", "--pack", "tiny", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["theorems"][0]["status"] == "verified"
    r = tc("prove", "--pack", "tiny")
    assert r.returncode == 0 and "1 step in 1 theorem, " in r.stdout
