"""Certificates of a proved α_c bracket (ℓ2-SAM, L = 2) as data, and their independent check.

:func:`certificate_of` writes the exact ``inputs`` the proof is about (z, ρ, L as exact decimal strings), the
bracket, and every validated step of both runs (boxes as [exact decimal midpoint, decimal radius rounded up]
strings, step sizes, orders, precision, the moving frame κ of each segment) with the field's identity (a sha256
of its sympy text) and a digest of the whole (a transport check, no evidence).

:func:`check_certificate` re-derives the claim from the inputs alone (:func:`theorycheck.proved.check.claim_of`:
both ends, two runs starting at them, d = len(z), the field rebuilt from the symbolic layer) and re-checks every
inclusion with code that shares nothing with the integrator but the ball arithmetic — its own evaluation of the
sympy field (a tree walk, :class:`theorycheck.proved.check.TreeEval`, not :mod:`symbolic.forms`) at its own balls
of the exact inputs, its own Taylor coefficients, its own inclusion tests: the Picard test of each box, the
Taylor polynomial over the start box plus the remainder over the checker's *own* Picard image (the field's range
is bounded once, by the checker: nothing the integrator computed has to nest with it), the continuity from each
step to the next (and across each re-centring of the frame), the initial state w = 0 at τ = 0, and the lemma
each run names at its end. A step is checked at its order K, and again at K + 4 when that fails: any order gives
an enclosure, and at K + 4 the remainder (the checker bounds it by Picard sweeps over the wide Picard image, another
method than the integrator's Newton series) is negligible beside the propagated width.
"""

from __future__ import annotations

import json
import time
from functools import lru_cache

from theorycheck.proved.check import (
    EXTRA_ORDER,
    CertificateCheck,
    CertificateError,
    Claim,
    TreeEval,
    answer,
    ball,
    check_certificate_path,
    claim_of,
    digest,
    exact_ball,
    field_identity,
    items,
    order_of,
    precision,
    read_certificate,
)

__all__ = ["FORMAT", "LEMMA_NAMES", "CertificateCheck", "certificate_of", "check_certificate", "write_certificate"]

FORMAT = "theorycheck-validated-certificate/2"
#: the lemmas a run may end in, by fate (the names :class:`theorycheck.proved.alpha_c.L2Prover` writes)
LEMMA_NAMES = {"collapse": ("collapse: N < ρ z_min",),
               "growth": ("growth: N_S > ρ z_min for S = the coordinates of z_min", "growth: N ≥ ρ z_max")}
STATEMENT = ("ℓ2-SAM, L = 2, one example z, balanced init α·1: α = lower collapses and α = upper grows "
             "(proofs/minor_first/persisting.py P1, P2), so α_c ∈ [lower, upper] (P3: the fate is monotone in α)")


# ------------------------------------------------------------------ writing
def inputs_of(result, z, rho, depth: int) -> dict:
    """The exact inputs a proof is about, as a certificate writes them: ``result.inputs`` when the prover
    recorded them (what its balls contain), else ``z`` and ``rho`` read by :mod:`theorycheck.arith.exact` (a float
    is its binary value)."""
    from theorycheck.arith.exact import ExactInputs, exact, exact_vector

    inputs = getattr(result, "inputs", None)
    if inputs is None:
        zs = exact_vector(z, "z") if not isinstance(z, (int, float)) else (exact(z, "z"),)
        inputs = ExactInputs(tuple(zs), exact(rho, "rho"), None, int(depth))
    out = inputs.as_dict()
    out["depth"] = int(depth)
    return out


def certificate_of(result, z=None, rho=None) -> dict:
    """The certificate (a JSON-able dict) of a :class:`~theorycheck.proved.bracket.ProvedAlphaC` made with
    ``record=True`` runs (depth 2); ``z``, ``rho``: the inputs when ``result`` does not carry them."""
    import sympy as sp

    from theorycheck.symbolic import systems as S

    inputs = inputs_of(result, z, rho, 2)
    d = len(inputs["z"])
    t, x, p, f = S.reduced_l2_system(d, frame=True)
    runs = [_run_data(fate, len(x)) for fate in (result.collapses, result.grows)]
    cert = {"format": FORMAT, "statement": STATEMENT, "inputs": inputs,
            "system": {"name": "C4's reduced ODE in the moving frame I = w + κτ", "d": d,
                       "states": [str(v) for v in x], "params": [str(v) for v in p],
                       "fields": [sp.srepr(e) for e in f], "identity": field_identity(f)},
            "lower": result.lower, "upper": result.upper, "runs": runs}
    cert["digest"] = digest(cert)
    return cert


def _run_data(fate, n: int) -> dict:
    """One run: its α, fate, lemma, precision and segments (κ and every step; n: the system's states, the
    coordinates written — parameters the integrator carried as states are the checker's own business)."""
    from theorycheck.arith.balls import arb_context, ball_text

    segs, prec = [], None
    for kappa, fp in fate.pipes:
        prec = fp.prec
        with arb_context(prec=fp.prec):
            steps = []
            for i, s in enumerate(fp.steps):
                start = fp.steps[i - 1].end if i else fp.set0.box()
                steps.append({"t0": ball_text(s.t0), "h": ball_text(s.h), "order": s.order,
                              "x0": [ball_text(v) for v in start[:n]],
                              "picard_box": [ball_text(v) for v in s.picard_box[:n]],
                              "end": [ball_text(v) for v in s.end[:n]]})
            segs.append({"kappa": ball_text(kappa), "steps": steps})
    return {"alpha": fate.alpha, "fate": fate.fate, "lemma": fate.lemma, "prec": prec, "segments": segs}


def write_certificate(path, result, z=None, rho=None) -> None:
    """Write :func:`certificate_of` to ``path`` (checked first: :func:`theorycheck.proved.check.check_certificate_path`)."""
    write_json(path, certificate_of(result, z, rho))


def write_json(path, cert: dict) -> None:
    """A certificate written to ``path`` (checked by the output rule, its folders created); an unwritable path is a
    one-line error."""
    from theorycheck.errors import TheorycheckError
    from theorycheck.outputs import make_parent

    make_parent(check_certificate_path(path), "certificate")
    try:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(cert, fh, ensure_ascii=False)
    except OSError as exc:
        raise TheorycheckError(f"certificate={str(path)!r}: cannot be written ({exc.strerror or exc})") from None


# ------------------------------------------------------------------ checking (independent code)
class _System:
    """C4's reduced ODE in the moving frame for dimension d, as the checker evaluates it: the field, the
    summands of N² and the lemmas' levels, each a tree walk over the symbolic layer's expressions."""

    def __init__(self, d: int):
        from theorycheck.symbolic import systems as S

        self.d = d
        _t, _x, _p, fields = S.reduced_l2_system(d, frame=True)
        self.field = TreeEval(fields[0])
        _args, terms = S.reduced_l2_summands(d, frame=True)
        self.terms = [TreeEval(tm) for tm in terms]
        largs, levels = S.l2_persisting_levels()
        self.level_names = [str(a) for a in largs]
        self.levels = [TreeEval(e) for e in levels]


@lru_cache(maxsize=8)
def _system(d: int) -> _System:
    return _System(d)


def _fields(L: int, d: int):
    from theorycheck.symbolic import systems as S

    return S.reduced_l2_system(d, frame=True)[3]


def _depth_rule(L: int) -> str | None:
    return None if L == 2 else f"depth {L}: this format is for L = 2 (even L ≥ 4: the depth-L format)"


def check_certificate(cert, *, stop_at_first: bool = False) -> CertificateCheck:
    """Re-check an L = 2 certificate (a dict, or a path to its JSON file read with bounded size and depth); see
    the module docstring. ``stop_at_first``: return at the first failed check (beside the digest)."""
    started = time.perf_counter()
    cert = read_certificate(cert)
    claim, fails = claim_of(cert, fmt=FORMAT, depth_of=_depth_rule, fields_of=_fields, lemmas=LEMMA_NAMES)
    steps = 0
    if claim is not None and not (stop_at_first and _serious(fails)):
        runs = cert.get("runs") if isinstance(cert.get("runs"), list) else []
        for ri, run in enumerate(runs[:2]):
            steps += _check_run_safely(claim, ri, run, fails, stop_at_first)
    from theorycheck.proved.alpha_c import LEMMAS_L2

    return answer(claim, fails, steps, time.perf_counter() - started, cert, LEMMAS_L2)


def _serious(fails: list) -> bool:
    """A failure beside the digest's (which alone does not stop a check at its first failure)."""
    return any(not f.startswith("digest") for f in fails)


def _check_run_safely(claim: Claim, ri: int, run, fails: list, stop: bool) -> int:
    """:func:`_check_run` at the run's precision + 64 bits; a malformed run is one failure line."""
    prec = run.get("prec") if isinstance(run, dict) else None
    if not isinstance(prec, int) or any(f.startswith(f"run {ri + 1}: precision") for f in fails):
        return 0
    with precision(prec + 64):
        try:
            return _check_run(_system(claim.d), claim, ri, run, fails, stop)
        except (CertificateError, ValueError, ArithmeticError, KeyError, TypeError, AttributeError) as exc:
            fails.append(f"run {ri + 1}: malformed ({str(exc)[:200]})")
            return 0


def _check_run(system: _System, claim: Claim, ri: int, run: dict, fails: list, stop: bool) -> int:
    """Every step of run ``ri`` (α = the bracket's end, z and ρ the exact inputs, balls of the checker's own),
    then the lemma the run names at its end. Returns the steps checked."""
    fixed = {f"z{j + 1}": v for j, v in enumerate(claim.z_balls())}
    fixed.update(alpha=exact_ball(claim.alpha(ri)), rho=claim.rho_ball())
    prev, n = None, 0
    for si, seg in enumerate(items(run, "segments", f"run {ri + 1}")):
        kappa = ball(seg.get("kappa") if isinstance(seg, dict) else None, f"run {ri + 1}, segment {si + 1}: κ")
        if not kappa.rad().is_zero():
            fails.append(f"run {ri + 1}, segment {si + 1}: the frame κ is not an exact number")
            return n
        for ki, st in enumerate(items(seg, "steps", f"run {ri + 1}, segment {si + 1}")):
            if stop and _serious(fails):
                return n
            n += 1
            where = f"run {ri + 1} (α = {run.get('alpha')}), segment {si + 1}, step {ki + 1}"
            prev = _check_step(system, dict(fixed, kappa=kappa), st, prev, where, fails)
    if prev is None:
        fails.append(f"run {ri + 1}: no steps")
    elif not (stop and _serious(fails)):
        _check_lemma(system, claim, ri, run, dict(fixed), prev, fails)
    return n


def _state(st: dict, key: str, where: str):
    v = items(st, key, where)
    if len(v) != 1:
        raise CertificateError(f"{where}: {key} must hold one ball (the state w)")
    return ball(v[0], f"{where}: {key}")


def _check_step(system: _System, env: dict, st, prev, where: str, fails: list):
    """One step: its start (w = 0 at τ = 0, or the previous end moved to this segment's frame), the Picard test
    of its box, and its end box against the Taylor polynomial over the start box plus the remainder over the
    checker's own Picard image. Returns (end, t1, κ) for the next step."""
    from flint import arb

    if not isinstance(st, dict):
        raise CertificateError(f"{where}: a step is an object")
    t0, h, K = ball(st.get("t0"), f"{where}: t0"), ball(st.get("h"), f"{where}: h"), order_of(st, where)
    x0, box, end = (_state(st, k, where) for k in ("x0", "picard_box", "end"))
    if not h > 0:
        fails.append(f"{where}: the step size is not positive")
        return end, t0 + h, env["kappa"]
    if prev is None:
        if not (t0.contains(arb(0)) and x0.contains(arb(0))):
            fails.append(f"{where}: the first state is not w = 0 at τ = 0")
    else:
        p_end, p_t1, p_kappa = prev
        moved = p_end + (p_kappa - env["kappa"]) * p_t1
        if not (x0.contains(moved) and t0.contains(p_t1)):
            fails.append(f"{where}: the step does not start where the previous one ended")
    H = arb(h / 2, (h / 2).upper())  # [0, h]
    T = t0 + H
    P = x0 + H * system.field(dict(env, tau=T, w=box))
    if not box.contains_interior(P):
        fails.append(f"{where}: the Picard box fails the Picard test")
        return end, t0 + h, env["kappa"]
    if not any(end.contains(_enclosure(system, env, t0, x0, h, T, P, k)) for k in (K, K + EXTRA_ORDER)):
        fails.append(f"{where}: the end box does not contain the Taylor enclosure")
    return end, t0 + h, env["kappa"]


def _enclosure(system: _System, env: dict, t0, x0, h, T, P, K: int):
    """x(t0 + h) for every start in x0: the order-K Taylor polynomial over x0 plus the Lagrange remainder, the
    (K + 1)-th coefficient over the Picard image P (any order gives an enclosure)."""
    c = _taylor(system.field, t0, x0, env, K)
    r = _taylor(system.field, T, P, env, K + 1)[K + 1]
    acc = c[K]
    for k in range(K - 1, -1, -1):
        acc = acc * h + c[k]
    return acc + r * h ** (K + 1)


def _taylor(fw, t0, x0, env_fixed, K):
    """Own Taylor coefficients: Picard on series, the length set for each sweep (checker's copy, independent)."""
    from flint import arb, arb_series, ctx

    old = ctx.cap
    try:
        ctx.cap = K + 2
        W = arb_series([x0])
        for n in range(1, K + 1):
            ctx.cap = n + 1
            env = dict(env_fixed)
            env["tau"] = arb_series([t0, arb(1)])
            env["w"] = W
            W = fw(env).integral() + x0
        if W.prec < K + 1:
            raise ArithmeticError("series truncated")
        c = W.coeffs()
        return [c[k] if k < len(c) else arb(0) for k in range(K + 1)]
    finally:
        ctx.cap = old


def _check_lemma(system: _System, claim: Claim, ri: int, run: dict, env: dict, prev, fails: list) -> None:
    """The lemma run ``ri`` names holds for every point of its last enclosure (levels from the symbolic layer)."""
    end, t1, kappa = prev
    env.update(kappa=kappa, tau=t1, w=end)
    tv = [ev(env) for ev in system.terms]
    N2 = sum(tv[1:], tv[0])
    zmin, zmax = min(claim.z), max(claim.z)
    mins = [j for j in range(claim.d) if claim.z[j] == zmin]  # exact
    Nmin2 = sum((tv[j] for j in mins[1:]), tv[mins[0]])
    lenv = dict(zip(system.level_names, (exact_ball(zmin), exact_ball(zmax), claim.rho_ball())))
    collapse, grow, subset = (ev(lenv) for ev in system.levels)
    holds = {LEMMA_NAMES["collapse"][0]: lambda: N2 < collapse ** 2,
             LEMMA_NAMES["growth"][0]: lambda: Nmin2 > subset ** 2,
             LEMMA_NAMES["growth"][1]: lambda: N2 >= grow ** 2}
    lemma = run.get("lemma")
    if lemma in holds and not holds[lemma]():
        fails.append(f"run {ri + 1} (α = {run.get('alpha')}): {lemma} does not hold at the end")
