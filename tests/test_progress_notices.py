"""Long work says so on stderr: the several-examples α_c search draws a bar (scan, then bisection), and
the first call of the compiled kernel says that numba is compiling (tens of seconds, once)."""

from __future__ import annotations

import io
import time

import numpy as np
import pytest


def test_dataset_alpha_c_draws_a_progress_bar(capsys):
    from theorycheck.proofs.minor_first.predict import dataset as ds

    r = ds.dataset_collapse_threshold([[1.0, 2.0, 3.0]], [1.0], 1.0, rel_tol=0.3, alpha_range=(0.1, 1.0), progress=True)
    err = capsys.readouterr().err
    assert r["value"] is not None and r["evidence"]["relative_width"] <= 0.3
    assert err.startswith("\ralpha_c(Z): integrations [") and "100.0%" in err and err.endswith("\n")
    ds.dataset_collapse_threshold([[1.0, 2.0, 3.0]], [1.0], 1.0, rel_tol=0.3, alpha_range=(0.1, 1.0), progress=False)
    assert capsys.readouterr().err == ""


class _FirstCall:
    """A stand-in for a numba dispatcher that has not compiled yet: the first call is slow."""

    def __init__(self, seconds: float, real=None):
        self.signatures: list = []
        self.seconds, self.real = seconds, real

    def __call__(self, *args):
        if not self.signatures:
            time.sleep(self.seconds)
            self.signatures.append("compiled")
        if self.real is not None:
            self.real(*args)


def test_first_kernel_call_says_it_compiles_and_a_fast_one_says_nothing():
    from theorycheck.proofs.minor_first.reduced import kernel

    said: list[str] = []
    slow = _FirstCall(kernel.COMPILE_NOTICE_AFTER + 0.4)
    kernel._call(slow, (), said.append)
    kernel._call(slow, (), said.append)  # compiled now: silent
    assert len(said) == 2 and said[0].startswith("compiling the numba kernel (once")
    assert said[1].startswith("compiled (and ran the first chunk) in ")
    quick, said = _FirstCall(0.0), []
    kernel._call(quick, (), said.append)  # a disk-cache load: nothing to say
    assert said == []


def test_heatmap_on_the_kernel_shows_the_compile_notice_on_stderr(monkeypatch):
    pytest.importorskip("numba")
    from theorycheck.proofs.minor_first.reduced import kernel

    import theorycheck as tc
    from theorycheck import progress as progress_mod
    from theorycheck.sweep.run import RunOptions

    monkeypatch.setattr(kernel, "_run_serial", _FirstCall(kernel.COMPILE_NOTICE_AFTER + 0.4, kernel._run_serial))
    stream = io.StringIO()
    monkeypatch.setattr(progress_mod.sys, "stderr", stream)
    res = tc.heatmap(tc.Setting.from_z([1.0, 2.0, 3.0], optimizer="sam-l2", rho=1.0), alphas=np.array([0.2, 0.5, 1.0]),
                     times=np.array([0.5, 1.0]), backend="serial", progress=True,
                     opts=RunOptions(array_backend="numba"))
    assert res.meta["run"]["array_backend"] == "numba" and res["jdag"].shape == (3, 2)
    text = stream.getvalue()
    assert "compiling the numba kernel (once: later runs load it from the disk cache) …" in text
    assert "compiled (and ran the first chunk) in " in text
