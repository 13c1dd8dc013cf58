"""Certificates of a proved α_c bracket (ℓ2-SAM, L = 2) as data, and their independent check.

:func:`certificate_of` writes every validated step of both runs (boxes as [exact decimal midpoint, decimal radius
rounded up] strings, step sizes, orders, precision, the moving frame κ of each segment) with the field's identity
(a sha256 of its sympy text) and a digest of the whole. :func:`check_certificate` re-checks every inclusion with
code that shares nothing with the integrator but the ball arithmetic: its own evaluation of the sympy field (a
tree walk, not :mod:`symbolic.forms`), its own Taylor coefficients, its own inclusion tests — the Picard test
of each a-priori box, the Taylor polynomial plus remainder inside each end box, the continuity from each step to
the next (and across each re-centring of the frame), the initial state, and the lemma at the end of each run.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field

FORMAT = "theorycheck-validated-certificate/1"


# ------------------------------------------------------------------ writing
def certificate_of(result, z, rho) -> dict:
    """The certificate (a JSON-able dict) of a :class:`~theorycheck.proved.alpha_c.ProvedAlphaC` made with
    ``record=True`` runs (depth 2)."""
    import sympy as sp

    from theorycheck.proved.validated import arb_context, ball_text
    from theorycheck.symbolic import systems as S

    d = len(z)
    t, x, p, f = S.reduced_l2_system(d, frame=True)
    runs = []
    for fate in (result.collapses, result.grows):
        segs = []
        prec = None
        for kappa, fp in fate.pipes:
            prec = fp.prec
            with arb_context(prec=fp.prec):
                segs.append({"kappa": ball_text(kappa), "steps": [
                    {"t0": ball_text(s.t0), "h": ball_text(s.h), "order": s.order,
                     "x0": [ball_text(v) for v in (fp.steps[i - 1].end if i else fp.set0.box())],
                     "picard_box": [ball_text(v) for v in s.picard_box], "apriori": [ball_text(v) for v in s.apriori],
                     "end": [ball_text(v) for v in s.end]}
                    for i, s in enumerate(fp.steps)]})
        runs.append({"alpha": fate.alpha, "fate": fate.fate, "lemma": fate.lemma, "prec": prec, "segments": segs})
    from flint import arb

    from theorycheck.proved.validated.balls import exact_decimal

    cert = {"format": FORMAT,
            "statement": "ℓ2-SAM, L = 2, one example z, balanced init α·1: α = lower collapses and α = upper grows "
                         "(proofs/minor_first/persisting.py P1, P2), so α_c ∈ [lower, upper] (P3: the fate is monotone in α)",
            "system": {"name": "C4's reduced ODE in the moving frame I = w + κτ", "d": d,
                       "states": [str(v) for v in x], "params": [str(v) for v in p],
                       "fields": [sp.srepr(e) for e in f], "identity": _identity(f)},
            "z": [exact_decimal(arb(float(v))) for v in z], "rho": exact_decimal(arb(float(rho))),
            "lower": result.lower, "upper": result.upper, "runs": runs}
    cert["digest"] = _digest(cert)
    return cert


def write_certificate(path, result, z, rho) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(certificate_of(result, z, rho), fh, ensure_ascii=False)


def _identity(fields) -> str:
    import sympy as sp

    return hashlib.sha256("\n".join(sp.srepr(e) for e in fields).encode()).hexdigest()


def _digest(cert: dict) -> str:
    body = {k: v for k, v in cert.items() if k != "digest"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


# ------------------------------------------------------------------ checking (independent code)
@dataclass
class CertificateCheck:
    """``ok`` when every inclusion holds and the digest matches; ``failures``: one line per failed check, naming
    the run, segment and step; ``steps`` checked; ``seconds``."""

    ok: bool
    failures: list = field(default_factory=list)
    steps: int = 0
    seconds: float = 0.0
    digest_ok: bool = True
    lower: str | None = None
    upper: str | None = None

    def as_dict(self) -> dict:
        """Keys: ok, digest_ok, failures, steps, seconds, lower, upper."""
        return {"ok": self.ok, "digest_ok": self.digest_ok, "failures": list(self.failures), "steps": self.steps,
                "seconds": round(self.seconds, 3), "lower": self.lower, "upper": self.upper}


class _Eval:
    """Evaluates a sympy expression at balls or series by walking its tree (memoised per call)."""

    def __init__(self, expr, names):
        self.expr = expr
        self.names = names

    def __call__(self, env):
        import sympy as sp
        from flint import arb

        memo = {}

        def ev(e):
            if e in memo:
                return memo[e]
            if isinstance(e, sp.Symbol):
                out = env[e.name]
            elif isinstance(e, sp.Integer):
                out = arb(int(e))
            elif isinstance(e, sp.Rational):
                out = arb(int(e.p)) / arb(int(e.q))
            elif isinstance(e, sp.Add):
                out = None
                for a in e.args:
                    v = ev(a)
                    out = v if out is None else _add(out, v)
            elif isinstance(e, sp.Mul):
                out = None
                for a in e.args:
                    v = ev(a)
                    out = v if out is None else _mul(out, v)
            elif isinstance(e, sp.Pow):
                b, n = ev(e.args[0]), e.args[1]
                if n.is_Integer and n > 0:
                    out = b
                    for _ in range(int(n) - 1):
                        out = _mul(out, b)
                elif n.is_Integer and n < 0:
                    out = b
                    for _ in range(-int(n) - 1):
                        out = _mul(out, b)
                    out = _inv(out)
                elif n == sp.Rational(1, 2):
                    out = b.sqrt()
                elif n == sp.Rational(-1, 2):
                    out = b.rsqrt()
                else:
                    out = (b.log() * ev(n)).exp()
            elif isinstance(e, sp.exp):
                out = ev(e.args[0]).exp()
            else:
                raise ValueError(f"the checker does not evaluate {type(e).__name__}")
            memo[e] = out
            return out

        return ev(self.expr)


def _add(a, b):
    from flint import arb_series

    if isinstance(b, arb_series) and not isinstance(a, arb_series):
        a, b = b, a
    return a + b


def _mul(a, b):
    from flint import arb_series

    if isinstance(b, arb_series) and not isinstance(a, arb_series):
        a, b = b, a
    return a * b


def _inv(a):
    from flint import arb

    return arb(1) / a


def _ball(t):
    from flint import arb

    return arb(str(t[0])) + arb(0, arb(str(t[1])).upper()) if str(t[1]) != "0" else arb(str(t[0]))


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


def _run_claim(ri: int, run: dict, cert: dict, fails: list):
    """Run ``ri`` of a bracket certificate must claim collapse at its lower end (run 1) and growth at its
    upper end (run 2): a mismatch goes to ``fails``. Sets the checking precision (the run's + 64 bits) and
    returns (ρ, α) as exact balls at it."""
    from flint import arb, ctx

    want = ("collapse", cert["lower"]) if ri == 0 else ("growth", cert["upper"])
    if (run["fate"], run["alpha"]) != want:
        fails.append(f"run {ri + 1}: claims {run['fate']} at α = {run['alpha']}, the bracket needs {want[0]} "
                     f"at {want[1]}")
    ctx.prec = int(run["prec"]) + 64
    return arb(str(cert["rho"])), arb(str(run["alpha"]))


def check_certificate(cert, *, stop_at_first: bool = False) -> CertificateCheck:
    """Re-check a certificate (a dict or a path to its JSON file); see the module docstring. ``stop_at_first``:
    return at the first failed inclusion (a rejection without re-checking the rest)."""
    import sympy as sp
    from flint import arb, ctx

    from theorycheck.symbolic import systems as S

    t_start = time.perf_counter()
    if not isinstance(cert, dict):
        with open(cert, encoding="utf-8") as fh:
            cert = json.load(fh)
    fails: list[str] = []
    digest_ok = cert.get("digest") == _digest(cert)
    if not digest_ok:
        fails.append("digest: the certificate's digest does not match its data (a number was changed after it was "
                     "written)")
    if cert.get("format") != FORMAT:
        return CertificateCheck(False, fails + [f"format {cert.get('format')!r} is not {FORMAT}"], 0,
                                time.perf_counter() - t_start, digest_ok)
    d = int(cert["system"]["d"])
    _t, _x, _p, fields = S.reduced_l2_system(d, frame=True)
    if cert["system"]["identity"] != _identity(fields) or cert["system"]["fields"] != [sp.srepr(e) for e in fields]:
        fails.append("system: the field is not C4's reduced ODE in the moving frame (identity differs)")
    args, terms = S.reduced_l2_summands(d, frame=True)
    fw = _Eval(fields[0], None)
    term_ev = [_Eval(tm, None) for tm in terms]
    zs = [str(v) for v in cert["z"]]
    nsteps = 0
    old_prec = ctx.prec
    try:
        for ri, run in enumerate(cert["runs"]):
            rho, alpha_exact = _run_claim(ri, run, cert, fails)
            z = [arb(v) for v in zs]
            prev_end = None
            prev_t1 = None
            prev_kappa = None
            for si, seg in enumerate(run["segments"]):
                kappa = _ball(seg["kappa"])
                for ki, st in enumerate(seg["steps"]):
                    if stop_at_first and len(fails) > (0 if digest_ok else 1):
                        break
                    nsteps += 1
                    where = f"run {ri + 1} (α = {run['alpha']}), segment {si + 1}, step {ki + 1}"
                    t0, h = _ball(st["t0"]), _ball(st["h"])
                    x0 = [_ball(v) for v in st["x0"]]
                    box = [_ball(v) for v in st["picard_box"]]
                    B = [_ball(v) for v in st["apriori"]]
                    end = [_ball(v) for v in st["end"]]
                    K = int(st["order"])
                    a_ball = x0[1] if len(x0) > 1 else alpha_exact
                    if not a_ball.contains(alpha_exact):
                        fails.append(f"{where}: the α of the state does not contain α = {run['alpha']}")
                    # start: the initial state, or the previous end (moved to this segment's frame)
                    if prev_end is None:
                        if not (t0.contains(arb(0)) and x0[0].contains(arb(0))):
                            fails.append(f"{where}: the first state is not w = 0 at τ = 0")
                    else:
                        moved = prev_end[0] + (prev_kappa - kappa) * prev_t1 if ki == 0 else prev_end[0]
                        if not (x0[0].contains(moved) and t0.contains(prev_t1)):
                            fails.append(f"{where}: the step does not start where the previous one ended")
                    fixed = {"z" + str(j + 1): z[j] for j in range(d)}
                    fixed.update(alpha=a_ball, rho=rho, kappa=kappa)
                    # Picard: x0 + [0, h]·f([t0, t0 + h], box) inside box, and that image inside the a-priori box
                    H = arb(h / 2, (h / 2).upper())
                    T = t0 + H
                    env = dict(fixed)
                    env.update(tau=T, w=box[0])
                    P = x0[0] + H * fw(env)
                    if not box[0].contains_interior(P):
                        fails.append(f"{where}: the Picard box fails the Picard test")
                    if not B[0].contains(P):
                        fails.append(f"{where}: the a-priori enclosure does not contain the Picard image")
                    # Taylor polynomial over the start box plus the remainder over the a-priori box
                    c = _taylor(fw, t0, x0[0], fixed, K)
                    r = _taylor(fw, T, B[0], fixed, K + 1)[K + 1]
                    acc = c[K]
                    for k in range(K - 1, -1, -1):
                        acc = acc * h + c[k]
                    val = acc + r * h ** (K + 1)
                    if not end[0].contains(val):
                        fails.append(f"{where}: the end box does not contain the Taylor enclosure")
                    prev_end, prev_t1, prev_kappa = end, t0 + h, kappa
            # the lemma at the end of the run
            if prev_end is None:
                fails.append(f"run {ri + 1}: no steps")
                continue
            env = {"z" + str(j + 1): z[j] for j in range(d)}
            env.update(alpha=alpha_exact, rho=rho, kappa=prev_kappa, tau=prev_t1, w=prev_end[0])
            tv = [ev(env) for ev in term_ev]
            N2 = sum(tv[1:], tv[0])
            zmin = min(z, key=lambda v: float(v.mid()))
            zmax = max(z, key=lambda v: float(v.mid()))
            mins = [j for j in range(d) if float(z[j].mid()) == float(zmin.mid())]
            Nmin2 = sum((tv[j] for j in mins[1:]), tv[mins[0]])
            if ri == 0 and not N2 < (rho * zmin) ** 2:
                fails.append(f"run 1 (α = {run['alpha']}): N < ρ z_min does not hold at the end")
            if ri == 1 and not (Nmin2 > (rho * zmin) ** 2 or N2 >= (rho * zmax) ** 2):
                fails.append(f"run 2 (α = {run['alpha']}): no growth lemma holds at the end")
    finally:
        ctx.prec = old_prec
    return CertificateCheck(not fails, fails, nsteps, time.perf_counter() - t_start, digest_ok,
                            cert.get("lower"), cert.get("upper"))
