"""Certificates of a proved α_c(L) bracket (ℓ2-SAM, even L ≥ 4) as data, and their independent check.

:func:`certificate_of_depth` writes the exact ``inputs`` (z, ρ, L as exact decimal strings) and both runs of
:func:`theorycheck.proved.alpha_c_depth.prove_alpha_c_depth` (made with ``record=True``): the blown-up ratio
system (its sympy text and identity), and for each run the names of the coordinates of its Lohner sets (the
states, then any parameter the integrator carried as a state because its ball has a radius), the initial Lohner
set and every step — its start time, step size, order, the box that passed the Picard test and the Lohner set
{c + A r : r ∈ R} at its end — every ball as [exact decimal midpoint, radius rounded up], with a digest of the
whole (a transport check, no evidence).

:func:`check_certificate_depth` re-derives the claim from the inputs alone
(:func:`theorycheck.proved.check.claim_of`) and re-checks it with code that shares nothing with the integrator
but the ball arithmetic (the field is evaluated by walking its sympy tree, :class:`theorycheck.proved.check.TreeEval`;
the Taylor and variational coefficients, the Jacobian (sympy.diff) and the inclusions are its own): the initial
set contains the start on the ray r(0) = c z (from the perturbation ratio at u = α·1, at the checker's balls of
the exact inputs), each Picard box passes the Picard test, each end set contains the Taylor polynomial at the
centre plus the remainder over the Picard image plus the mean-value term DΦ(X̄)·A·R (in the end set's
coordinates: A'^{-1}(Φ(c) + Z − c') + (A'^{-1} DΦ A) R ⊂ R'; at the step's order K, or at K + 4 when the remainder of
order K, bounded by another method than the integrator's, is too coarse), each step starts where the previous one
ended, and the lemma the run names (every ω_j > 0, or every ω_j < 0) holds at the end.
"""

from __future__ import annotations

import time
from functools import lru_cache

from theorycheck.proved.certificate import inputs_of, write_json
from theorycheck.proved.check import (
    EXTRA_ORDER,
    CertificateCheck,
    CertificateError,
    Claim,
    TreeEval,
    TreeEvals,
    answer,
    ball,
    claim_of,
    digest,
    exact_ball,
    field_identity,
    items,
    order_of,
    precision,
    read_certificate,
)

__all__ = ["FORMAT_DEPTH", "LEMMAS_DEPTH", "LEMMA_NAMES_DEPTH", "certificate_of_depth", "check_any_certificate",
           "check_certificate_depth", "write_certificate_depth"]

FORMAT_DEPTH = "theorycheck-validated-certificate-depth/2"
#: the lemmas a depth-L bracket rests on (names of :data:`theorycheck.symbolic.lemmas.LEMMAS`)
LEMMAS_DEPTH = ("P3", "P4", "P5", "P6")
#: the lemmas a run may end in, by fate (the names :class:`theorycheck.proved.alpha_c_depth.DepthProver` writes)
LEMMA_NAMES_DEPTH = {"collapse": ("collapse: every r_j > 1 (every ω_j > 0)",),
                     "growth": ("growth: every r_j ≤ 1 (every ω_j < 0)",)}


def certificate_of_depth(result, z=None, rho=None, L: int = 4) -> dict:
    """The certificate (a JSON-able dict) of a proved α_c(L) bracket made with ``record=True``; ``z``, ``rho``:
    the inputs when ``result`` does not carry them."""
    import sympy as sp

    from theorycheck.arith.balls import arb_context, ball_text
    from theorycheck.symbolic import systems as S

    inputs = inputs_of(result, z, rho, int(L))
    d = len(inputs["z"])
    t, y, p, f = S.ratio_blowup_system(int(L), d)
    runs = []
    for fate in (result.collapses, result.grows):
        (_k, fp), = fate.pipes
        with arb_context(prec=fp.prec):
            steps = [{"t0": ball_text(s.t0), "h": ball_text(s.h), "order": s.order,
                      "picard_box": [ball_text(v) for v in s.picard_box], "end": s.set_end.as_dict()}
                     for s in fp.steps]
            runs.append({"alpha": fate.alpha, "fate": fate.fate, "lemma": fate.lemma, "prec": fp.prec,
                         "coordinates": list(fp.states), "set0": fp.set0.as_dict(), "steps": steps})
    cert = {"format": FORMAT_DEPTH,
            "statement": f"ℓ2-SAM, even L = {int(L)}, one example z, balanced init α·1: α = lower collapses (every "
                         "r_j > 1) and α = upper grows (every r_j ≤ 1) (proofs/minor_first/persisting.py P4, the "
                         "blow-up of the ratio reduction P5–P6), so α_c(L) ∈ [lower, upper] (P3: the fate is "
                         "monotone in α)",
            "inputs": inputs,
            "system": {"name": f"the ratio reduction blown up at r = 1 (L = {int(L)})", "L": int(L), "d": d,
                       "states": [str(v) for v in y], "params": [str(v) for v in p],
                       "fields": [sp.srepr(e) for e in f], "identity": field_identity(f)},
            "lower": result.lower, "upper": result.upper, "runs": runs}
    cert["digest"] = digest(cert)
    return cert


def write_certificate_depth(path, result, z=None, rho=None, L: int = 4) -> None:
    """Write :func:`certificate_of_depth` to ``path`` (checked first)."""
    write_json(path, certificate_of_depth(result, z, rho, L))


# ------------------------------------------------------------------ checking (independent code)
class _System:
    """The blown-up ratio system of (L, d) as the checker evaluates it, on the coordinates of a run's Lohner
    sets: the states, then the parameters carried as states (field 0); its Jacobian (sympy.diff) on them; the
    perturbation ratios at the start."""

    def __init__(self, L: int, d: int, carried: tuple):
        import sympy as sp

        from theorycheck.symbolic import systems as S

        _t, y, p, fields = S.ratio_blowup_system(L, d)
        by_name = {str(v): v for v in p}
        syms = [*y, *(by_name[c] for c in carried)]
        exprs = [*fields, *([sp.Integer(0)] * len(carried))]
        self.names = [str(v) for v in syms]
        self.carried = carried
        self.field = TreeEvals(exprs)  # the field's components, one tape
        self.jac = TreeEvals([sp.diff(e, s) for e in exprs for s in syms])  # its Jacobian, row by row
        u, _pr, ratios = S.balanced_forms(L, d)
        self.u = [str(v) for v in u]
        self.ratios = [TreeEval(r) for r in ratios]
        self.states = len(y)


@lru_cache(maxsize=8)
def _system(L: int, d: int, carried: tuple) -> _System:
    return _System(L, d, carried)


def _fields(L: int, d: int):
    from theorycheck.symbolic import systems as S

    return S.ratio_blowup_system(L, d)[3]


def _depth_rule(L: int) -> str | None:
    return None if L >= 4 and L % 2 == 0 else f"depth {L}: this format is for even L ≥ 4 (L = 2: the L = 2 format)"


def check_certificate_depth(cert, *, stop_at_first: bool = False) -> CertificateCheck:
    """Re-check a depth-L certificate (a dict, or a path read with bounded size and depth); see the module
    docstring. ``stop_at_first``: return at the first failed check (beside the digest)."""
    started = time.perf_counter()
    cert = read_certificate(cert)
    claim, fails = claim_of(cert, fmt=FORMAT_DEPTH, depth_of=_depth_rule, fields_of=_fields,
                            lemmas=LEMMA_NAMES_DEPTH)
    steps = 0
    if claim is not None and not (stop_at_first and _serious(fails)):
        runs = cert.get("runs") if isinstance(cert.get("runs"), list) else []
        for ri, run in enumerate(runs[:2]):
            steps += _check_run_safely(claim, ri, run, fails, stop_at_first)
    return answer(claim, fails, steps, time.perf_counter() - started, cert, LEMMAS_DEPTH)


def _serious(fails: list) -> bool:
    return any(not f.startswith("digest") for f in fails)


def _check_run_safely(claim: Claim, ri: int, run, fails: list, stop: bool) -> int:
    prec = run.get("prec") if isinstance(run, dict) else None
    if not isinstance(prec, int) or any(f.startswith(f"run {ri + 1}: precision") for f in fails):
        return 0
    with precision(prec + 64):
        try:
            return _check_run(claim, ri, run, fails, stop)
        except (CertificateError, ValueError, ArithmeticError, KeyError, TypeError, AttributeError) as exc:
            fails.append(f"run {ri + 1}: malformed ({str(exc)[:200]})")
            return 0


def _coordinates(claim: Claim, run: dict, ri: int) -> tuple:
    """The parameters run ``ri`` carries as states (after λ, ω_1 … ω_d), each a z_k named once."""
    from theorycheck.symbolic import systems as S

    coords = run.get("coordinates")
    _t, y, p, _f = S.ratio_blowup_system(claim.depth, claim.d)
    states, params = [str(v) for v in y], {str(v) for v in p}
    if not isinstance(coords, list) or coords[:len(states)] != states:
        raise CertificateError(f"run {ri + 1}: coordinates must start with the states {', '.join(states)}")
    carried = tuple(coords[len(states):])
    if len(set(carried)) != len(carried) or not set(carried) <= params:
        raise CertificateError(f"run {ri + 1}: coordinates beyond the states must be distinct parameters z_k")
    return carried


def _check_run(claim: Claim, ri: int, run: dict, fails: list, stop: bool) -> int:
    """The start on the ray, every step, and the lemma the run names at its end. Returns the steps checked."""
    system = _system(claim.depth, claim.d, _coordinates(claim, run, ri))
    zb = claim.z_balls()
    fixed = {f"z{j + 1}": zb[j] for j in range(claim.d) if f"z{j + 1}" not in system.carried}
    c, A, R = _read_set(run.get("set0"), len(system.names), f"run {ri + 1}: set0")
    if not _contains(_box(c, A, R), _start(system, claim, ri, zb)):
        fails.append(f"run {ri + 1}: the initial set does not contain the start on the ray r(0) = c z")
    from flint import arb

    t_prev, n = arb(0), 0
    for ki, st in enumerate(items(run, "steps", f"run {ri + 1}")):
        if stop and _serious(fails):
            return n
        n += 1
        where = f"run {ri + 1} (α = {run.get('alpha')}), step {ki + 1}"
        c, A, R, t_prev = _check_step(system, fixed, st, (c, A, R), t_prev, where, fails)
    if n == 0:
        fails.append(f"run {ri + 1}: no steps")
        return n
    om = _box(c, A, R)[1:1 + claim.d]
    lemma = run.get("lemma")
    holds = all(w > 0 for w in om) if lemma == LEMMA_NAMES_DEPTH["collapse"][0] else all(w < 0 for w in om)
    if not holds and not (stop and _serious(fails)):
        fails.append(f"run {ri + 1} (α = {run.get('alpha')}): {lemma} does not hold at the end")
    return n


def _start(system: _System, claim: Claim, ri: int, zb: list) -> list:
    """(λ, ω, carried z) at the start: r(0) = the perturbation ratios at u = α·1, λ = ln|r − 1|, ω = (r − 1)/|r − 1|."""
    alpha = exact_ball(claim.alpha(ri))
    env = {f"z{j + 1}": zb[j] for j in range(claim.d)}
    env.update(rho=claim.rho_ball(), **{name: alpha for name in system.u})
    s0 = [ev(env) - 1 for ev in system.ratios]
    R0 = sum((v * v for v in s0[1:]), s0[0] * s0[0]).sqrt()
    return [R0.log(), *[v / R0 for v in s0], *(env[c] for c in system.carried)]


def _box(c, A, R) -> list:
    from flint import arb

    n = len(c)
    return [c[i] + sum((A[i, j] * R[j] for j in range(n)), arb(0)) for i in range(n)]


def _contains(box, point) -> bool:
    return len(box) == len(point) and all(b.contains(p) for b, p in zip(box, point))


def _read_set(S, n: int, where: str):
    from flint import arb_mat

    if not isinstance(S, dict):
        raise CertificateError(f"{where}: a Lohner set is an object {{c, A, R}}")
    c, R, rows = items(S, "c", where), items(S, "R", where), items(S, "A", where)
    if len(c) != n or len(R) != n or len(rows) != n or any(not isinstance(r, list) or len(r) != n for r in rows):
        raise CertificateError(f"{where}: a Lohner set of {n} coordinates needs c, R of {n} balls and A {n} × {n}")
    A = arb_mat(n, n, [ball(rows[i][j], where) for i in range(n) for j in range(n)])
    return [ball(v, where) for v in c], A, [ball(v, where) for v in R]


def _check_step(system: _System, fixed: dict, st, S, t_prev, where: str, fails: list):
    """One Lohner step: start time, Picard test, and the end set's inclusion of the checker's own enclosure.
    Returns the end set and time."""
    from flint import arb

    if not isinstance(st, dict):
        raise CertificateError(f"{where}: a step is an object")
    n = len(system.names)
    c, A, R = S
    t0, h, K = ball(st.get("t0"), f"{where}: t0"), ball(st.get("h"), f"{where}: h"), order_of(st, where)
    Bx = [ball(v, f"{where}: picard_box") for v in items(st, "picard_box", where)]
    end = _read_set(st.get("end"), n, f"{where}: end")
    if len(Bx) != n:
        raise CertificateError(f"{where}: picard_box must hold {n} balls")
    if not (h > 0 and t0.contains(t_prev)):
        fails.append(f"{where}: the step does not start where the previous one ended")
    Xb = _box(c, A, R)
    H = arb(h / 2, (h / 2).upper())  # [0, h]
    env = dict(fixed, varsigma=t0 + H, **{system.names[i]: Bx[i] for i in range(n)})
    F = system.field(env)
    P = [Xb[i] + H * F[i] for i in range(n)]
    if not all(Bx[i].contains_interior(P[i]) for i in range(n)):
        fails.append(f"{where}: the Picard box fails the Picard test")
    elif not any(_end_contains(system, fixed, t0, h, k, (c, A, R), Xb, P, end) for k in (K, K + EXTRA_ORDER)):
        fails.append(f"{where}: the end set does not contain the Taylor enclosure")
    return (*end, t0 + h)


def _end_contains(system: _System, fixed: dict, t0, h, K: int, S, Xb, P, end) -> bool:
    """A'^{-1}(Φ(c) + Z − c') + (A'^{-1} DΦ(X̄) A) R ⊂ R': the Taylor polynomial at the centre, the remainder over
    the Picard image P, the Jacobian of the Taylor map over the box X̄ (own series, own variational equation)."""
    from flint import arb, arb_mat

    c, A, R = S
    c1, A1, R1 = end
    n = len(c)
    T = t0 + arb(h / 2, (h / 2).upper())
    Xc = _series_solution(system, t0, c, K, fixed)
    phi = [_horner([_coef(Xc[i], k) for k in range(K + 1)], h) for i in range(n)]
    XP = _series_solution(system, T, P, K + 1, fixed)
    Z = [_coef(XP[i], K + 1) * h ** (K + 1) for i in range(n)]
    V = _variational(system, t0, _series_solution(system, t0, Xb, K, fixed), K, fixed)
    D = arb_mat(n, n, [_horner([V[k][i][j] for k in range(K + 1)], h) for i in range(n) for j in range(n)])
    Ainv = A1.inv()
    M = Ainv * (D * A)
    for i in range(n):
        acc = sum((Ainv[i, j] * (phi[j] + Z[j] - c1[j]) for j in range(n)), arb(0))
        acc += sum((M[i, j] * R[j] for j in range(n)), arb(0))
        if not R1[i].contains(acc):
            return False
    return True


def _series_solution(system: _System, t0, x0, K, env_fixed):
    """Own Taylor series of the solution through (t0, x0): Picard sweeps on series, the length set per sweep."""
    from flint import arb, arb_series, ctx

    old = ctx.cap
    try:
        n = len(x0)
        ctx.cap = 1
        X = [arb_series([v]) for v in x0]
        for m in range(1, K + 1):
            ctx.cap = m + 1
            env = dict(env_fixed, varsigma=arb_series([t0, arb(1)]), **{system.names[i]: X[i] for i in range(n)})
            F = [_lift(f) for f in system.field(env)]
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


def _variational(system: _System, t0, X, K, env_fixed):
    """Own ∂x_i/∂x0_j series along the state series X: V' = J(x(s)) V, V(0) = I; V[k][i][j] coefficient k."""
    from flint import arb, arb_series, ctx

    n = len(X)
    old = ctx.cap
    try:
        ctx.cap = K + 1
        env = dict(env_fixed, varsigma=arb_series([t0, arb(1)]), **{system.names[i]: X[i] for i in range(n)})
        flat = system.jac(env)
        J = [[_lift(flat[i * n + j]) for j in range(n)] for i in range(n)]
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


def check_any_certificate(cert, *, stop_at_first: bool = False) -> CertificateCheck:
    """Re-check a certificate of either kind (a dict or a path to its JSON file, read with bounded size and
    depth): L = 2 (:func:`theorycheck.proved.certificate.check_certificate`) or even L ≥ 4
    (:func:`check_certificate_depth`), by its ``format``."""
    from theorycheck.proved.certificate import check_certificate

    cert = read_certificate(cert)
    if str(cert.get("format", "")).startswith(FORMAT_DEPTH.rsplit("/", 1)[0]):
        return check_certificate_depth(cert, stop_at_first=stop_at_first)
    return check_certificate(cert, stop_at_first=stop_at_first)
