"""Fuzz test: hypothesis over the inputs a user (or a script) can give, driving the command
line in-process (``theorycheck.cli.main(argv)``) and the library.

Classes of input: ties (exact and within 1e-15), α exactly ρ or a threshold ± 1 ulp, scales
from subnormal numbers to 1e300, d = 1…1000 (the fast tier stays small), L = 1…8, malformed
CSV files (bytes, encodings, ragged rows, huge or non-finite numbers), injection strings.

Properties: only documented errors (a one-line ``theorycheck CMD: error: …`` with exit
status 2, or argparse's usage error, also exit 2) and never a traceback; nothing runs past
its budget (a watchdog alarm, far above the budgets passed, catches hangs: it is no
timing assertion); no NaN/inf in JSON and no "internal error"; the same input gives the
same bytes; separators and max-margin solutions have the margins they claim at every scale;
thresholds are invariant under scaling z; ``initial_index`` + ``switches`` chain to
``final_index``.

Seeded (``derandomize=True``): the same inputs every run. ``THEORYCHECK_FUZZ_SEED=N`` draws a
new set (``derandomize`` off, seed N). Fast tier: < 60 s on one core; ``-m slow``: the long tier.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os

import numpy as np
import pytest
from _hang import hang_guard
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from theorycheck.cli.main import main
from theorycheck.errors import TheorycheckError

_SEED = os.environ.get("THEORYCHECK_FUZZ_SEED")


def fuzz_settings(n: int):
    """Seeded hypothesis settings with ``n`` examples and no deadline (the watchdog bounds time)."""
    s = settings(max_examples=n, deadline=None, derandomize=_SEED is None, database=None,
                 suppress_health_check=list(HealthCheck), print_blob=True)

    def deco(f):
        f = s(f)
        return seed(int(_SEED))(f) if _SEED is not None else f

    return deco




def cli(argv: list[str], limit: float = 60.0) -> tuple[int, str, str]:
    """Run the CLI in-process; returns (exit status, stdout, stderr). Asserts the documented
    failure modes only: exit 0/1 with output, or 2 with one line on stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), hang_guard(limit):
        try:
            rc = main(argv)
        except SystemExit as exc:  # argparse: usage error
            rc = exc.code if isinstance(exc.code, int) else 2
    o, e = out.getvalue(), err.getvalue()
    assert rc in (0, 1, 2), (argv, rc, e)
    assert "Traceback" not in e, (argv, e)
    assert "internal error" not in e, (argv, e)
    if rc == 2 and not e.startswith("usage:"):
        lines = [ln for ln in e.splitlines() if ln.strip() and not ln.startswith("  …") and not ln.startswith("[")]
        assert len(lines) == 1 and ": error: " in lines[0], (argv, e)
    return rc, o, e


def no_nonfinite(doc) -> None:
    """JSON from the CLI is strict (no NaN/Infinity literals: ``json.loads`` with a hook)."""
    def bad(x):
        raise AssertionError(f"non-finite literal {x} in JSON")

    json.loads(doc, parse_constant=bad)


def strip_timing(text: str) -> str:
    doc = json.loads(text)

    def walk(x):
        if isinstance(x, dict):
            return {k: walk(v) for k, v in x.items() if k not in ("seconds", "elapsed")}
        if isinstance(x, list):
            return [walk(v) for v in x]
        return x

    return json.dumps(walk(doc), sort_keys=True)


# ---------------------------------------------------------------------------- numbers
TINY = 5e-324


@st.composite
def scaled(draw, min_exp=-320, max_exp=300):
    """A nonzero float at a random scale (subnormal to 1e300) with a random sign."""
    exp = draw(st.integers(min_exp, max_exp))
    mant = draw(st.floats(1.0, 9.999, allow_nan=False))
    sign = draw(st.sampled_from([1.0, -1.0]))
    with np.errstate(under="ignore", over="ignore"):
        v = sign * mant * 10.0**exp if exp > -300 else sign * float(mant * 1e-300) * 10.0**(exp + 300)
    return v if v != 0 else sign * TINY


@st.composite
def z_vectors(draw, max_d=8, positive=False):
    """Vectors z with ties (exact or within 1e-15), scaled entries, zeros."""
    d = draw(st.integers(1, max_d))
    base = draw(st.lists(st.floats(0.05, 10.0, allow_nan=False), min_size=d, max_size=d))
    z = np.array(base)
    kind = draw(st.sampled_from(["plain", "tie", "near-tie", "scaled", "signs"]))
    if kind == "tie" and d > 1:
        z[draw(st.integers(0, d - 1))] = z[draw(st.integers(0, d - 1))]
    elif kind == "near-tie" and d > 1:
        i, j = draw(st.integers(0, d - 1)), draw(st.integers(0, d - 1))
        z[i] = z[j] * (1 + draw(st.sampled_from([1e-15, -1e-15, 2.220446049250313e-16])))
    elif kind == "scaled":
        c = draw(st.sampled_from([1e-300, 1e-200, 1e-100, 1e100, 1e200, 1e300, 2.0**-1060, 2.0**1000]))
        with np.errstate(under="ignore", over="ignore"):
            z = z * c
        z[z == 0] = TINY
    elif kind == "signs" and not positive:
        z = z * np.array(draw(st.lists(st.sampled_from([1.0, -1.0]), min_size=d, max_size=d)))
    return z


def fmt(v) -> str:
    return ",".join(repr(float(x)) for x in np.atleast_1d(v))


# ---------------------------------------------------------------------------- injection strings
INJECTIONS = [
    "1,2;rm -rf /", "$(touch pwned)", "`id`", "1,2 && echo hi", "../../../../etc/passwd", "/dev/zero",
    "1e999,2", "nan,1", "inf", "-inf,1", "0x10,2", "１,２", "−1,2", "1,,2", ",", "", " ", "1 2", "1\n2",
    "1\x00,2", "%s%s%n", "{0}", "\\u0000", "' OR 1=1 --", "<script>", "A" * 5000, "1," * 3000 + "1",
    "--json", "-", "--", "1e-400,1", "1e308,1e308", "-0,1",
]


@pytest.mark.parametrize("text", INJECTIONS, ids=range(len(INJECTIONS)))
def test_injection_strings_are_plain_bad_input(text, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for argv in (["setting", "--z", text, "--json"], ["maxmargin", "--z", text, "--norm", "1", "--json"],
                 ["setting", "--data", text], ["setting", "--z", "1,2", "--alpha", text],
                 ["derive", "--depth", text], ["heatmap", "--z", "1,2", "--alphas", text, "--t-max", "1", "--json"],
                 ["trajectory", "--z", "1,2", "--plot", text + ".png", "--max-seconds", "1", "--t-max", "1"]):
        rc, out, err = cli(argv)
        if rc == 0 and "--json" in argv:
            no_nonfinite(out)
    assert not (tmp_path / "pwned").exists()


# ---------------------------------------------------------------------------- setting and maxmargin (CLI)
@fuzz_settings(30)
@given(z=z_vectors(), alpha=st.sampled_from(["1", "0.5", "1e-300", "1e300", "-1", "0", "5e-324"]),
       depth=st.integers(0, 8), rho=st.sampled_from(["0", "1", "-1", "1e-300", "nan", "1e308"]),
       opt=st.sampled_from(["gd", "sam-l2", "sam-linf"]))
def test_setting_cli(z, alpha, depth, rho, opt):
    argv = ["setting", "--z", fmt(z), "--alpha", alpha, "--depth", str(depth), "--rho", rho, "--optimizer", opt,
            "--json"]
    rc, out, _ = cli(argv)
    if rc == 0:
        no_nonfinite(out)
        doc = json.loads(out)
        m = doc["separator_min_margin"]
        assert m >= 1.0 or np.max(np.abs(z)) < 1e-290, (z, m)
        assert doc["reachable_separable"] in (True, False, None)
        assert cli(argv)[1] == out  # the same bytes


@fuzz_settings(30)
@given(z=z_vectors(), norm=st.sampled_from(["1", "2"]))
def test_maxmargin_cli_one_example(z, norm):
    rc, out, err = cli(["maxmargin", "--z", fmt(z), "--norm", norm, "--json"])
    if rc != 0:
        return
    no_nonfinite(out)
    doc = json.loads(out)
    assert min(doc["margins"]) == pytest.approx(1.0, rel=1e-6)
    d = np.array(doc["direction"])
    assert np.linalg.norm(d) == pytest.approx(1.0, rel=1e-12)
    # one example: ℓ2 direction z/‖z‖; ℓ1 mass on the largest |z_j|
    zn = z / np.max(np.abs(z))
    if norm == "2" and np.min(np.abs(z)) > 1e-290:
        np.testing.assert_allclose(d, zn / np.linalg.norm(zn), atol=1e-6)
    if norm == "1":
        assert np.abs(zn[np.argmax(np.abs(d))]) == pytest.approx(1.0, rel=1e-9)


# ---------------------------------------------------------------------------- CSV files
@st.composite
def csv_bytes(draw):
    kind = draw(st.sampled_from(["numbers", "numbers", "header-latin1", "bom", "ragged", "random", "nonfinite",
                                 "labels", "huge", "crlf", "quotes"]))
    n, d = draw(st.integers(1, 6)), draw(st.integers(1, 4))
    rows = []
    for _ in range(n):
        x = [draw(scaled(-310, 300)) if kind == "huge" else draw(st.floats(-5, 5, allow_nan=False)) for _ in range(d)]
        y = draw(st.sampled_from([1, -1])) if kind != "labels" else draw(st.sampled_from([0, 2, 1, -1, 0.5]))
        rows.append(",".join(repr(v) for v in x) + f",{y}")
    text = "\n".join(rows) + "\n"
    if kind == "header-latin1":
        return ("x_é,ß,y\n" + text).encode("latin-1")
    if kind == "bom":
        return b"\xef\xbb\xbf" + text.encode()
    if kind == "ragged":
        return (text + "1,2\n").encode()
    if kind == "random":
        return draw(st.binary(min_size=0, max_size=300))
    if kind == "nonfinite":
        return (text + ",".join(["nan"] * (d + 1)) + "\n").encode()
    if kind == "crlf":
        return text.replace("\n", "\r\n").encode()
    if kind == "quotes":
        return ('"1","2",1\n"3" ,"x\n' + text).encode()
    return text.encode()


@fuzz_settings(40)
@given(data=csv_bytes(), cmd=st.sampled_from(["setting", "maxmargin"]))
def test_malformed_csv(tmp_path_factory, data, cmd):
    p = tmp_path_factory.mktemp("csv") / "d.csv"
    p.write_bytes(data)
    argv = ["setting", "--data", str(p), "--json"] if cmd == "setting" else \
        ["maxmargin", "--data", str(p), "--norm", "1", "--json"]
    rc, out, _ = cli(argv)
    if rc == 0:
        no_nonfinite(out)
        assert cli(argv)[1] == out


# ---------------------------------------------------------------------------- the library at every scale
@fuzz_settings(40)
@given(n=st.integers(1, 5), d=st.integers(1, 12), k=st.integers(-1070, 1000), data=st.data())
def test_separator_and_max_margin_at_every_scale(n, d, k, data):
    """The same problem at scale 2^k: the same directions (exactly, for normal numbers) and
    margins as claimed; separable data are never refused at any scale."""
    from theorycheck.setting import check_separable
    from theorycheck.solvers.maxmargin import max_margin

    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    Z = rng.normal(size=(n, d))
    Z[:, 0] = np.abs(Z[:, 0]) + 0.25  # feature 1 separates
    with np.errstate(under="ignore", over="ignore"):
        Zk = np.ldexp(Z, k)
    if np.any(np.all(Zk == 0, axis=1)) or not np.all(np.isfinite(Zk)):
        return
    beta = check_separable(Zk)
    m = Zk @ beta
    assert np.all(m > 0)
    assert np.min(m) >= 1.0 or k < -1000
    normal = np.all((Zk == 0) | (np.abs(Zk) >= 2.0**-1022))
    for p in (1, 2):
        r = max_margin(Zk, p)
        assert np.min(r.margins) == pytest.approx(1.0, rel=1e-9)
        assert math.isfinite(r.margin) and r.margin > 0
        if normal and -1000 < k < 1000:
            ref = max_margin(Z, p)
            np.testing.assert_array_equal(r.direction, ref.direction)


@fuzz_settings(25)
@given(z=z_vectors(max_d=6, positive=True), rho=st.floats(0.1, 5.0), k=st.integers(-200, 200))
def test_closed_form_thresholds_are_scale_invariant(z, rho, k):
    from theorycheck.proofs.minor_first.predict import thresholds as th

    z = np.abs(z)
    if np.min(z) < 1e-200 or np.max(z) > 1e200:
        return
    with np.errstate(under="ignore", over="ignore"):
        zk = np.ldexp(z, k)
    for f in (th.alpha_all_shrink, th.alpha_gd_like):
        with hang_guard(30):
            try:
                a, b = f(z, rho).value, f(zk, rho).value
            except TheorycheckError:
                continue
        assert (a is None) == (b is None)
        if a is not None:
            assert b == pytest.approx(a, rel=1e-12)


@pytest.mark.slow
@fuzz_settings(25)
@given(z=z_vectors(max_d=6, positive=True), rho=st.floats(0.1, 5.0))
def test_closed_form_thresholds_are_ordered(z, rho):
    from theorycheck.proofs.minor_first.predict import thresholds as th

    z = np.abs(z)
    try:
        lo, hi = th.alpha_all_shrink(z, rho).value, th.alpha_gd_like(z, rho).value
    except TheorycheckError:
        return
    if lo is not None and hi is not None:
        assert 0 < lo <= hi, (z, rho, lo, hi)


# ---------------------------------------------------------------------------- derive
@fuzz_settings(8)
@given(depth=st.integers(1, 8), dim=st.one_of(st.none(), st.integers(1, 3)), examples=st.integers(1, 3),
       opt=st.sampled_from(["gd", "sam-l2", "sam-linf"]), fmt_=st.sampled_from(["text", "latex", "json"]),
       balanced=st.booleans())
def test_derive_cli(depth, dim, examples, opt, fmt_, balanced):
    argv = ["derive", "--depth", str(depth), "--optimizer", opt, "--examples", str(examples), "--format", fmt_,
            "--max-seconds", "20"] + (["--dim", str(dim)] if dim else []) + (["--balanced"] if balanced else [])
    rc, out, _ = cli(argv)
    if rc == 0 and fmt_ == "json":
        no_nonfinite(out)
        assert cli(argv)[1] == out


# ---------------------------------------------------------------------------- trajectory
def _trajectory_argv(z, opt, rho, alpha, depth, extra):
    return ["trajectory", "--z", fmt(z), "--optimizer", opt, "--rho", repr(rho), "--alpha", fmt(alpha),
            "--depth", str(depth), "--max-seconds", "2", "--max-steps", "20000", "--json", *extra]


@st.composite
def trajectory_inputs(draw, max_d=4, max_depth=4):
    z = draw(z_vectors(max_d=max_d))
    opt = draw(st.sampled_from(["gd", "sam-l2", "sam-linf"]))
    rho = draw(st.sampled_from([0.0, 0.5, 1.0, 1e-300]))
    kind = draw(st.sampled_from(["plain", "rho", "ulp", "tiny", "huge", "vector"]))
    if kind == "rho":
        alpha = rho if rho > 0 else 1.0  # α exactly ρ
    elif kind == "ulp":
        a = rho if rho > 0 else 1.0
        alpha = float(np.nextafter(a, draw(st.sampled_from([0.0, np.inf]))))
    elif kind == "tiny":
        alpha = draw(st.sampled_from([1e-300, 5e-324, 1e-30]))
    elif kind == "huge":
        alpha = draw(st.sampled_from([1e30, 1e200]))
    elif kind == "vector":
        alpha = np.array(draw(st.lists(st.floats(0.1, 2.0), min_size=z.size, max_size=z.size)))
    else:
        alpha = draw(st.floats(0.05, 3.0))
    depth = draw(st.integers(1, max_depth))
    t_max = draw(st.sampled_from(["1", "20", "1e6"]))
    return z, opt, rho, alpha, depth, ["--t-max", t_max]


def _check_trajectory(argv, *, chain: bool):
    rc, out, err = cli(argv, limit=90.0)
    if rc != 0:
        return
    no_nonfinite(out)
    doc = json.loads(out)
    assert doc["stopped_because"]
    for v in doc["direction"]:
        assert math.isfinite(v)
    if doc["stopped_because"] != "max_seconds":  # a budget in seconds may stop at another step
        rc2, out2, _ = cli(argv, limit=90.0)
        assert rc2 == 0, argv
        again = json.loads(out2)
        if again["stopped_because"] == "max_seconds":
            # the rerun's seconds ran out first (a loaded host): the same computation cut short, so it
            # agrees with the first run up to where it stopped
            assert again["t_end"] <= doc["t_end"] and again["initial_index"] == doc["initial_index"], argv
            assert again["switches"] == [w for w in doc["switches"] if w["time"] <= again["t_end"]], argv
        else:
            assert strip_timing(out2) == strip_timing(out)
    if chain:
        j = doc["initial_index"]
        for s in doc["switches"]:
            assert s["from"] == j, (argv, doc["initial_index"], doc["switches"])
            j = s["to"]
        assert j == doc["final_index"], (argv, doc["initial_index"], doc["switches"], doc["final_index"])


@fuzz_settings(8)
@given(inp=trajectory_inputs(max_d=3, max_depth=3))
def test_trajectory_cli(inp):
    _check_trajectory(_trajectory_argv(*inp), chain=False)


# ---------------------------------------------------------------------------- heatmap
@fuzz_settings(4)
@given(z=z_vectors(max_d=3), opt=st.sampled_from(["gd", "sam-l2", "sam-linf"]),
       grid=st.sampled_from(["0.1:1:3", "0.5:0.5:1", "1e-300:1:2", "1:1e300:2", "-1:1:3", "0.1:1:0"]),
       tmin=st.sampled_from([None, "0", "1e-300", "20", "0.5"]), workers=st.sampled_from(["1", "40", "0"]))
def test_heatmap_cli(z, opt, grid, tmin, workers):
    argv = ["heatmap", "--z", fmt(z), "--optimizer", opt, "--rho", "1", "--alphas", grid, "--t-max", "10",
            "--nt", "4", "--json", "--backend", "serial", "--array-backend", "numpy", "--workers", workers,
            "--no-progress"] + (["--t-min", tmin] if tmin else [])
    rc, out, _ = cli(argv, limit=120.0)
    if rc == 0:
        no_nonfinite(out)
        doc = json.loads(out)
        assert all(0 < t <= 10 for t in doc["time"])


# ---------------------------------------------------------------------------- the long tier
@pytest.mark.slow
@fuzz_settings(60)
@given(inp=trajectory_inputs(max_d=8, max_depth=8))
def test_trajectory_cli_long(inp):
    _check_trajectory(_trajectory_argv(*inp), chain=False)


@pytest.mark.slow
@fuzz_settings(40)
@given(inp=trajectory_inputs(max_d=4, max_depth=4))
def test_trajectory_switches_chain(inp):
    _check_trajectory(_trajectory_argv(*inp), chain=True)


@pytest.mark.slow
@fuzz_settings(15)
@given(n=st.integers(1, 40), d=st.integers(1, 1000), k=st.sampled_from([-1060, -300, 0, 300, 1000]),
       s=st.integers(0, 2**31))
def test_large_d_setting_and_max_margin(n, d, k, s):
    from theorycheck import Setting
    from theorycheck.solvers.maxmargin import max_margin

    rng = np.random.default_rng(s)
    Z = rng.normal(size=(n, d))
    Z[:, rng.integers(d)] = np.abs(Z[:, 0]) + 0.1
    Zk = np.ldexp(Z, k)
    st_ = Setting(Zk, np.ones(n), depth=int(rng.integers(1, 9)))
    st_.reachable()
    for p in (1, 2):
        r = max_margin(st_.Z, p)
        assert np.min(r.margins) == pytest.approx(1.0, rel=1e-9)


@pytest.mark.slow
@fuzz_settings(60)
@given(z=z_vectors(max_d=12), alpha=st.sampled_from(["1", "1e-300", "1e300", "5e-324"]), depth=st.integers(1, 8),
       rho=st.sampled_from(["0", "1", "1e-300"]), opt=st.sampled_from(["gd", "sam-l2", "sam-linf"]))
def test_setting_cli_long(z, alpha, depth, rho, opt):
    test_setting_cli.hypothesis.inner_test(z, alpha, depth, rho, opt)


@pytest.mark.slow
@fuzz_settings(120)
@given(data=csv_bytes(), cmd=st.sampled_from(["setting", "maxmargin"]))
def test_malformed_csv_long(tmp_path_factory, data, cmd):
    test_malformed_csv.hypothesis.inner_test(tmp_path_factory, data, cmd)


@pytest.mark.slow
@fuzz_settings(4)
@given(z=z_vectors(max_d=6, positive=True), rho=st.sampled_from([0.5, 1.0, 2.0]))
def test_collapse_threshold_certified_or_inconclusive(z, rho):
    """α_c lies between the closed-form brackets and depends neither on the scale of z nor
    on the time budget (a budget may only make it inconclusive)."""
    from theorycheck.proofs.minor_first.predict import alpha_c as AC
    from theorycheck.proofs.minor_first.predict import thresholds as th

    z = np.abs(z)
    if np.min(z) < 1e-200 or np.max(z) > 1e200:
        return
    with hang_guard(400):
        # no seconds budget for the two compared runs (their Taylor step budgets bound them): a loaded host
        # must not turn a comparison into a skip
        a = AC.collapse_threshold(z, rho, digits=10, max_seconds=math.inf)
        b = AC.collapse_threshold(np.ldexp(z, 64), rho, digits=10, max_seconds=math.inf)
    with hang_guard(200):
        c = AC.collapse_threshold(z, rho, digits=10, max_seconds=0.5)  # a small budget: inconclusive or the same
    if a.value is not None and c.value is not None:
        assert c.value == pytest.approx(a.value, rel=1e-6)
    if a.value is not None and b.value is not None:
        assert b.value == pytest.approx(a.value, rel=1e-6)
        lo, hi = th.alpha_all_shrink(z, rho).value, th.alpha_gd_like(z, rho).value
        assert lo * (1 - 1e-9) <= a.value <= hi * (1 + 1e-9)
