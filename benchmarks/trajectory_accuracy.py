"""Accuracy and cost of theorycheck.integrate / discrete.

Run: ``PYTHONPATH=. python benchmarks/trajectory_accuracy.py`` (results of the last run in
benchmarks/trajectory_accuracy.txt). Measures the fixed-step GBS order, the discrete-vs-flow
order along the path, closed-form errors (blow-up and zero-hitting times), collapse times
float64 vs 30 digits and the cost of τ = 1e4.
"""

import functools
import time

import mpmath
import numpy as np
from theorycheck.proofs.minor_first.reduced import REDUCTIONS

from theorycheck import observe as ob
from theorycheck.setting import Setting
from theorycheck.solvers.backends import MpBackend
from theorycheck.solvers.discrete import run
from theorycheck.solvers.integrate import solve as _solve
from theorycheck.solvers.steppers import gbs_fixed
from theorycheck.symbolic import closed_forms as cf
from theorycheck.symbolic import forms as C
from theorycheck.symbolic import model as sy
from theorycheck.symbolic import theory_exprs as TE

#: solve with the first paper's reduction of the flow at hand (method="reduced"), as the API's has it
solve = functools.partial(_solve, reductions=REDUCTIONS)


def gbs_orders() -> None:
    exact = C.lambdify((cf.z_j, cf.alpha_j, sy.rho, sy.tau), TE.linf_blowup_solution(3), "mpmath")
    field = C.balanced_field(3, "gd", "mpmath").field
    bk = MpBackend(60)
    with mpmath.workdps(60):
        z, a, T = mpmath.mpf("1.5"), mpmath.mpf("0.5"), mpmath.mpf("0.6")

        def rhs(t, y):
            return bk.array([field(z, y[0], 0, 0)])

        ref = exact(z, a, 0, T)
        for k in (2, 3, 4):
            ns = [4, 8, 16, 32]
            errs = [abs(gbs_fixed(rhs, mpmath.mpf(0), bk.array([a]), T, n, k)[0] - ref) for n in ns]
            order = np.polyfit(np.log([float(T / n) for n in ns]), [float(mpmath.log(e)) for e in errs], 1)[0]
            print(f"GBS k={k}: measured order {order:.3f} (theory {2 * k})")


def discrete_orders() -> None:
    for opt, rho in (("gd", 0.0), ("sam-l2", 0.3)):
        s = Setting.from_z([0.5, 1.0, 1.5], optimizer=opt, rho=rho, alpha=0.5)
        flow = solve(s, t_max=5.0)
        levels = [-0.5, 0.0, 0.5, 1.0]
        ref = [ob.direction_at_norm(flow, lv) for lv in levels]
        etas = [0.04, 0.02, 0.01, 0.005]
        errs = []
        for eta in etas:
            tr = run(s, eta=eta, steps=10**6, stop_log_norm=1.05)
            errs.append(max(np.linalg.norm(ob.direction_at_norm(tr, lv) - r) for lv, r in zip(levels, ref)))
        order = np.polyfit(np.log(etas), np.log(errs), 1)[0]
        print(f"{opt} discrete-vs-flow errors {[f'{e:.3g}' for e in errs]} order {order:.3f}")


def closed_forms() -> None:
    z = np.array([1.3, 0.6, 2.2])
    alpha = np.array([1.4, 1.9, 1.05])
    for L in (3, 4, 5):
        for opt, rho in (("sam-linf", 0.5), ("gd", 0.0)):
            expr = TE.linf_blowup_time(L) if opt == "sam-linf" else TE.gd_blowup_time(L)
            f = C.lambdify((cf.z_j, cf.alpha_j, sy.rho), expr)
            for p in (None, 30):
                tr = solve(Setting.from_z(z, optimizer=opt, rho=rho, alpha=alpha, depth=L), t_max=50, digits=p)
                err = abs(tr.blowup_time / np.min(f(z, alpha, rho)) - 1)
                print(f"blowup L={L} {opt} digits={p}: rel err {err:.2e}")
    z = np.array([0.8, 1.7, 2.6])
    rho = 0.9
    al = np.array([0.35, 1.4, 0.8])
    zero = C.lambdify((cf.z_j, cf.alpha_j, sy.rho), TE.linf_l2_zero_time())
    for p in (None, 30):
        tr = solve(Setting.from_z(z, optimizer="sam-linf", rho=rho, alpha=al), t_max=12, digits=p)
        sl = {e.index: e.time for e in tr.events if e.kind == "slide"}
        errs = [f"{abs(sl[j] / zero(z[j - 1], al[j - 1], rho) - 1):.1e}" for j in (1, 3)]
        print(f"linf L=2 zero times digits={p}: rel err {errs}")


def collapse_and_long_horizon() -> None:
    s = Setting.from_z([1.0, 2.0, 3.0], optimizer="sam-l2", rho=1.0, alpha=0.05)
    for kw in (dict(), dict(method="reduced"), dict(digits=30), dict(method="reduced", digits=30)):
        t0 = time.time()
        tr = solve(s, t_max=10, **kw)
        print(f"collapse {kw}: {tr.collapse_time!r}  {time.time() - t0:.2f}s  {tr.n_evaluations} evaluations")
    s = Setting.from_z([1.0, 2.0, 3.0], optimizer="sam-l2", rho=1.0, alpha=0.5)
    for kw in (dict(), dict(digits=30)):
        t0 = time.time()
        tr = solve(s, t_max=1e4, **kw)
        print(f"l2 tau=1e4 {kw}: {tr.stopped_because} {time.time() - t0:.2f}s ln|beta| = {tr.log_abs_beta[-1]}")


if __name__ == "__main__":
    gbs_orders()
    discrete_orders()
    closed_forms()
    collapse_and_long_horizon()
