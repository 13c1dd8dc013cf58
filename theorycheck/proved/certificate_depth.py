"""Certificates of a proved α_c(L) bracket (ℓ2-SAM, even L ≥ 4) as data, and their independent check.

:func:`certificate_of_depth` writes both runs of :func:`theorycheck.proved.alpha_c_depth.prove_alpha_c_depth` (made
with ``record=True``): the blown-up ratio system (its sympy text and identity), and for each run the initial Lohner
set and every step — its start time, step size, order, the box that passed the Picard test and the Lohner set
{c + A r : r ∈ R} at its end — every ball as [exact decimal midpoint, radius rounded up], with a digest of the whole.

:func:`check_certificate_depth` re-checks it with code that shares nothing with the integrator but the ball
arithmetic (the field is evaluated by walking its sympy tree, :class:`theorycheck.proved.certificate._Eval`; the
Taylor and variational coefficients, the Jacobian (sympy.diff) and the inclusions are its own): the initial set
contains the start on the ray r(0) = c z (from the perturbation ratio at u = α·1), each Picard box passes the Picard
test, each end set contains the Taylor polynomial at the centre plus the remainder over the Picard image plus the
mean-value term DΦ(X̄)·A·R (in the end set's coordinates: A'^{-1}(Φ(c) + Z − c') + (A'^{-1} DΦ A) R ⊂ R'), each
step starts where the previous one ended, and the lemma (every ω_j > 0 or every ω_j < 0) holds at the end.
"""

from __future__ import annotations

import json
import time

from theorycheck.proved.certificate import CertificateCheck, _ball, _digest, _Eval, _identity, _run_claim

FORMAT_DEPTH = "theorycheck-validated-certificate-depth/1"


def _set_text(S) -> dict:
    return S.as_dict()


def certificate_of_depth(result, z, rho, L: int) -> dict:
    """The certificate (a JSON-able dict) of a proved α_c(L) bracket made with ``record=True``."""
    import sympy as sp
    from flint import arb

    from theorycheck.proved.validated import arb_context, ball_text
    from theorycheck.proved.validated.balls import exact_decimal
    from theorycheck.symbolic import systems as S

    d = len(z)
    t, y, p, f = S.ratio_blowup_system(int(L), d)
    runs = []
    for fate in (result.collapses, result.grows):
        (_k, fp), = fate.pipes
        with arb_context(prec=fp.prec):
            steps = [{"t0": ball_text(s.t0), "h": ball_text(s.h), "order": s.order,
                      "picard_box": [ball_text(v) for v in s.picard_box], "end": _set_text(s.set_end)}
                     for s in fp.steps]
            runs.append({"alpha": fate.alpha, "fate": fate.fate, "lemma": fate.lemma, "prec": fp.prec,
                         "set0": _set_text(fp.set0), "steps": steps})
    cert = {"format": FORMAT_DEPTH,
            "statement": f"ℓ2-SAM, even L = {int(L)}, one example z, balanced init α·1: α = lower collapses (every "
                         "r_j > 1) and α = upper grows (every r_j ≤ 1) (proofs/minor_first/persisting.py P4, the blow-up of the "
                         "ratio reduction P5–P6), so α_c(L) ∈ [lower, upper] (P3: the fate is monotone in α)",
            "system": {"name": f"the ratio reduction blown up at r = 1 (L = {int(L)})", "L": int(L), "d": d,
                       "states": [str(v) for v in y], "params": [str(v) for v in p],
                       "fields": [sp.srepr(e) for e in f], "identity": _identity(f)},
            "z": [exact_decimal(arb(float(v))) for v in z], "rho": exact_decimal(arb(float(rho))),
            "lower": result.lower, "upper": result.upper, "runs": runs}
    cert["digest"] = _digest(cert)
    return cert


def write_certificate_depth(path, result, z, rho, L: int) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(certificate_of_depth(result, z, rho, L), fh, ensure_ascii=False)


# ------------------------------------------------------------------ checking (independent code)
def _series_solution(fields, names, t0, x0, K, env_fixed):
    """Own Taylor series of the solution through (t0, x0): Picard sweeps on series, the length set per sweep."""
    from flint import arb, arb_series, ctx

    old = ctx.cap
    try:
        n = len(x0)
        ctx.cap = 1
        X = [arb_series([v]) for v in x0]
        for m in range(1, K + 1):
            ctx.cap = m + 1
            env = dict(env_fixed)
            env["varsigma"] = arb_series([t0, arb(1)])
            env.update({names[i]: X[i] for i in range(n)})
            F = [_lift(fw(env)) for fw in fields]
            X = [F[i].integral() + x0[i] for i in range(n)]
        if any(x.prec < K + 1 for x in X):
            raise ArithmeticError("series truncated")
        return X
    finally:
        ctx.cap = old


def _lift(v):
    from flint import arb, arb_series

    return arb_series([v]) if isinstance(v, arb) else v


def _coef(s, k):
    from flint import arb

    c = s.coeffs()
    return c[k] if k < len(c) else arb(0)


def _variational(jac, names, t0, X, K, env_fixed):
    """Own ∂x_i/∂x0_j series along the state series X: V' = J(x(s)) V, V(0) = I; V[k][i][j] coefficient k."""
    from flint import arb, arb_series, ctx

    n = len(X)
    old = ctx.cap
    try:
        ctx.cap = K + 1
        env = dict(env_fixed)
        env["varsigma"] = arb_series([t0, arb(1)])
        env.update({names[i]: X[i] for i in range(n)})
        J = [[_lift(jac[i][j](env)) for j in range(n)] for i in range(n)]
        one, zero = arb(1), arb(0)
        V0 = [[one if i == j else zero for j in range(n)] for i in range(n)]
        ctx.cap = 1
        V = [[arb_series([V0[i][j]]) for j in range(n)] for i in range(n)]
        for m in range(1, K + 1):
            ctx.cap = m + 1
            V = [[sum((J[i][k] * V[k][j] for k in range(1, n)), J[i][0] * V[0][j]).integral() + V0[i][j]
                  for j in range(n)] for i in range(n)]
        return [[[_coef(V[i][j], k) for j in range(n)] for i in range(n)] for k in range(K + 1)]
    finally:
        ctx.cap = old


def _horner(coefs, h):
    acc = coefs[-1]
    for c in reversed(coefs[:-1]):
        acc = acc * h + c
    return acc


def _read_set(S):
    from flint import arb_mat

    c = [_ball(v) for v in S["c"]]
    n = len(c)
    A = arb_mat(n, n, [_ball(S["A"][i][j]) for i in range(n) for j in range(n)])
    R = [_ball(v) for v in S["R"]]
    return c, A, R


def check_certificate_depth(cert: dict, *, stop_at_first: bool = False) -> CertificateCheck:
    """Re-check a depth-L certificate (a dict); see the module docstring."""
    import sympy as sp
    from flint import arb, ctx

    from theorycheck.symbolic import systems as S

    t_start = time.perf_counter()
    fails: list[str] = []
    digest_ok = cert.get("digest") == _digest(cert)
    if not digest_ok:
        fails.append("digest: the certificate's digest does not match its data (a number was changed after it was "
                     "written)")
    L, d = int(cert["system"]["L"]), int(cert["system"]["d"])
    _t, y, _p, fields = S.ratio_blowup_system(L, d)
    if cert["system"]["identity"] != _identity(fields) or cert["system"]["fields"] != [sp.srepr(e) for e in fields]:
        fails.append("system: the field is not the blown-up ratio system (identity differs)")
    names = [str(v) for v in y]
    n = len(names)
    fw = [_Eval(e, None) for e in fields]
    jac = [[_Eval(sp.diff(fields[i], y[j]), None) for j in range(n)] for i in range(n)]
    u, _pr, ratios = S.balanced_forms(L, d)
    ratio_ev = [_Eval(r, None) for r in ratios]
    nsteps = 0
    old_prec = ctx.prec
    try:
        for ri, run in enumerate(cert["runs"]):
            rho, alpha = _run_claim(ri, run, cert, fails)
            z = [arb(str(v)) for v in cert["z"]]
            fixed = {f"z{j + 1}": z[j] for j in range(d)}
            # the start: r(0) = the perturbation ratios at u = α·1; λ = ln|r − 1|, ω = (r − 1)/|r − 1|
            env = dict(fixed)
            env.update(rho=rho, **{str(u[j]): alpha for j in range(d)})
            s0 = [ev(env) - 1 for ev in ratio_ev]
            R0 = sum((v * v for v in s0[1:]), s0[0] * s0[0]).sqrt()
            y0 = [R0.log(), *[v / R0 for v in s0]]
            c, A, R = _read_set(run["set0"])
            box0 = [c[i] + sum((A[i, j] * R[j] for j in range(n)), arb(0)) for i in range(n)]
            if not all(box0[i].contains(y0[i]) for i in range(n)):
                fails.append(f"run {ri + 1}: the initial set does not contain the start on the ray r(0) = c z")
            t_prev = arb(0)
            for ki, st in enumerate(run["steps"]):
                if stop_at_first and len(fails) > (0 if digest_ok else 1):
                    break
                nsteps += 1
                where = f"run {ri + 1} (α = {run['alpha']}), step {ki + 1}"
                t0, h, K = _ball(st["t0"]), _ball(st["h"]), int(st["order"])
                if not t0.contains(t_prev):
                    fails.append(f"{where}: the step does not start where the previous one ended")
                Xb = [c[i] + sum((A[i, j] * R[j] for j in range(n)), arb(0)) for i in range(n)]
                Bx = [_ball(v) for v in st["picard_box"]]
                H = arb(h / 2, (h / 2).upper())
                T = t0 + H
                env = dict(fixed)
                env.update(varsigma=T, **{names[i]: Bx[i] for i in range(n)})
                P = [Xb[i] + H * fw[i](env) for i in range(n)]
                if not all(Bx[i].contains_interior(P[i]) for i in range(n)):
                    fails.append(f"{where}: the Picard box fails the Picard test")
                    c, A, R = _read_set(st["end"])
                    t_prev = t0 + h
                    continue
                # Taylor polynomial at the centre, the remainder over the Picard image, the Jacobian over the box
                Xc = _series_solution(fw, names, t0, c, K, fixed)
                phi = [_horner([_coef(Xc[i], k) for k in range(K + 1)], h) for i in range(n)]
                XP = _series_solution(fw, names, T, P, K + 1, fixed)
                Z = [_coef(XP[i], K + 1) * h ** (K + 1) for i in range(n)]
                XB = _series_solution(fw, names, t0, Xb, K, fixed)
                V = _variational(jac, names, t0, XB, K, fixed)
                from flint import arb_mat

                D = arb_mat(n, n, [_horner([V[k][i][j] for k in range(K + 1)], h) for i in range(n) for j in range(n)])
                c1, A1, R1 = _read_set(st["end"])
                Ainv = A1.inv()
                M = Ainv * (D * A)
                ok = True
                for i in range(n):
                    acc = sum((Ainv[i, j] * (phi[j] + Z[j] - c1[j]) for j in range(n)), arb(0))
                    acc += sum((M[i, j] * R[j] for j in range(n)), arb(0))
                    if not R1[i].contains(acc):
                        ok = False
                if not ok:
                    fails.append(f"{where}: the end set does not contain the Taylor enclosure")
                c, A, R = c1, A1, R1
                t_prev = t0 + h
            if not run["steps"]:
                fails.append(f"run {ri + 1}: no steps")
                continue
            om = [c[i] + sum((A[i, j] * R[j] for j in range(n)), arb(0)) for i in range(1, n)]
            if ri == 0 and not all(w > 0 for w in om):
                fails.append(f"run 1 (α = {run['alpha']}): every ω_j > 0 (every r_j > 1) does not hold at the end")
            if ri == 1 and not all(w < 0 for w in om):
                fails.append(f"run 2 (α = {run['alpha']}): every ω_j < 0 (every r_j < 1) does not hold at the end")
    finally:
        ctx.prec = old_prec
    return CertificateCheck(not fails, fails, nsteps, time.perf_counter() - t_start, digest_ok,
                            cert.get("lower"), cert.get("upper"))


def check_any_certificate(cert, *, stop_at_first: bool = False) -> CertificateCheck:
    """Re-check a certificate of either kind (a dict or a path to its JSON file): L = 2
    (:func:`theorycheck.proved.certificate.check_certificate`) or even L ≥ 4 (:func:`check_certificate_depth`)."""
    from theorycheck.proved.certificate import check_certificate

    if not isinstance(cert, dict):
        with open(cert, encoding="utf-8") as fh:
            cert = json.load(fh)
    if cert.get("format") == FORMAT_DEPTH:
        return check_certificate_depth(cert, stop_at_first=stop_at_first)
    return check_certificate(cert, stop_at_first=stop_at_first)
