"""Claims of the pack ``saddle-to-saddle`` (``theorycheck verify``): the jump process's own (exact rational
arithmetic on random problems with 2-decimal entries), and the flows' (flow_claims.py)."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import strategies as st
from theorycheck.proofs.saddle_to_saddle.algorithm import jump_process
from theorycheck.proofs.saddle_to_saddle.flows import problem

from theorycheck.claims.claim import Claim, Outcome

#: the explicit instance where a coordinate enters (t̃ = 1/6, β = 2/3), leaves (2/9) and re-enters with the
#: other sign (14/9, β = −1/3); checked by hand in THEORY.md and tests/test_saddles_cases.py
LEAVES = {"X": [["0", "0", "-1"], ["-1", "-3", "1"]], "y": ["3", "-2"]}
#: the grid of the "typical problem" claims: seeds 0..39 at (n, d) = (3, 6)
GRID = tuple({"seed": s, "n": 3, "d": 6} for s in range(40))


@st.composite
def _inputs(draw, underdetermined: bool = False):
    n = draw(st.integers(1, 4))
    d = draw(st.integers(n + 1, 7)) if underdetermined else draw(st.integers(1, 6))
    return {"seed": draw(st.integers(0, 100_000)), "n": n, "d": d}


def _describe(x) -> dict:
    X, y = problem(x)
    return {**x, "X": X, "y": y}


def _undecided(p) -> Outcome | None:
    if p.status != "stopped at a zero gradient":
        return Outcome(None, detail={"why": p.status})
    if not p.kkt:  # an exact KKT failure is a bug of the engine, never a verdict
        raise ArithmeticError("a saddle failed its exact KKT conditions")
    return None


def check_loss(x) -> Outcome:
    """SS.loss: L(β^(k+1)) ≤ L(β^k) at every jump, from L(0); deviation: the largest increase."""
    p = jump_process(*problem(x))
    if (u := _undecided(p)) is not None:
        return u
    X, y = p.X, p.y
    losses = [sum((v * v for v in y), Fraction(0)) / (2 * len(X))] + [j.loss for j in p.jumps]
    rises = [float(b - a) for a, b in zip(losses, losses[1:])]
    worst = max(rises, default=0.0)
    return Outcome(worst <= 0, max(worst, 0.0), {"jumps": len(p.jumps), "losses": [str(v) for v in losses]})


def check_l1(x) -> Outcome:
    """SS.l1: n < d in general position: the final saddle interpolates, its exact ℓ1 certificate holds and
    the LP's ℓ1 norm agrees (relative 1e-9). Where a saddle is not unique (outside general position) the
    reported one is checked all the same: its certificate does not need uniqueness."""
    from theorycheck.solvers.l1_interpolator import l1_certificate, l1_interpolator_lp

    p = jump_process(*problem(x))
    if (u := _undecided(p)) is not None:
        return u
    c = l1_certificate(p.X, p.y, p.final, p.nu)
    lp = l1_interpolator_lp(p.X, p.y)
    if lp.status != "solved":
        return Outcome(None, detail={"why": f"LP {lp.status}"})
    gap = abs(lp.l1_norm - float(c.l1_norm)) / max(1.0, float(c.l1_norm))
    return Outcome(c.ok and gap <= 1e-9, gap, {"l1_exact": str(c.l1_norm), "l1_lp": lp.l1_norm, "certificate": c.ok,
                                               "interpolates": c.interpolates, "dual_gap": str(c.gap),
                                               "non_unique": bool(p.non_unique)})


def check_grows(x) -> Outcome:
    """SS.grows (as naive incremental learning would have it): no coordinate ever leaves the support."""
    p = jump_process(*problem(x))
    if (u := _undecided(p)) is not None:
        return u
    left = [(k + 1, j.left) for k, j in enumerate(p.jumps) if j.left]
    return Outcome(not left, float(sum(len(v) for _, v in left)),
                   {"left": [{"jump": k, "coordinates": list(v)} for k, v in left],
                    "times": [str(j.time) for j in p.jumps]})


def check_enters(x) -> Outcome:
    """SS.grows.enters: every jump adds a coordinate to the support (a coordinate leaves only at a jump where
    another enters). Deviation: the number of jumps that add none."""
    p = jump_process(*problem(x))
    if (u := _undecided(p)) is not None:
        return u
    if p.non_unique:
        return Outcome(None, detail={"why": "a non-unique saddle: the support is not defined"})
    idle = [k + 1 for k, j in enumerate(p.jumps) if not j.entered]
    return Outcome(not idle, float(len(idle)), {"jumps_without_entry": idle})


def check_first(x) -> Outcome:
    """SS.first: t̃₁ = n/(2‖Xᵀy‖∞) exactly, and when one coordinate i attains it, β¹ = ⟨x_i, y⟩/‖x_i‖² e_i
    exactly (THEORY.md SS5)."""
    p = jump_process(*problem(x))
    X, y = p.X, p.y
    xty = [sum((X[i][j] * y[i] for i in range(len(X))), Fraction(0)) for j in range(len(X[0]))]
    top = max(abs(v) for v in xty)
    if top == 0:
        return Outcome(len(p.jumps) == 0, float(len(p.jumps)), {"why": "Xᵀy = 0: no jump"})
    first = p.jumps[0]
    t_ok = first.time == Fraction(len(X), 2) / top
    argmax = [j for j, v in enumerate(xty) if abs(v) == top]
    detail = {"time": str(first.time), "closed_form_time": str(Fraction(len(X), 2) / top), "argmax": argmax}
    if len(argmax) > 1:
        return Outcome(t_ok, 0.0 if t_ok else 1.0, {**detail, "tie": True})
    i = argmax[0]
    b = xty[i] / sum((X[r][i] ** 2 for r in range(len(X))), Fraction(0))
    closed = tuple(b if j == i else Fraction(0) for j in range(len(X[0])))
    dev = float(max(abs(a - c) for a, c in zip(first.beta, closed)))
    return Outcome(t_ok and first.beta == closed, dev + (0.0 if t_ok else 1.0), {**detail, "closed_form_beta": str(b)})


def check_least_squares(x) -> Outcome:
    """SS.lsq: n > d with independent columns: the final saddle is the least squares (∇L = 0 exactly)."""
    p = jump_process(*problem(x))
    if (u := _undecided(p)) is not None:
        return u
    from theorycheck.solvers.exact_lsq import gradient, solve_linear

    X, y = p.X, p.y
    d = len(X[0])
    G = [[sum((X[i][a] * X[i][b] for i in range(len(X))), Fraction(0)) for b in range(d)] for a in range(d)]
    ls = solve_linear(G, [sum((X[i][a] * y[i] for i in range(len(X))), Fraction(0)) for a in range(d)])
    if ls is None:
        return Outcome(None, detail={"why": "dependent columns: outside the hypotheses"})
    ok = tuple(ls) == p.final and not any(gradient(X, y, p.final))
    return Outcome(ok, float(max(abs(a - b) for a, b in zip(ls, p.final))),
                   {"final_loss": str(p.final_loss), "jumps": len(p.jumps)})


@st.composite
def _overdetermined(draw):
    d = draw(st.integers(1, 4))
    return {"seed": draw(st.integers(0, 100_000)), "n": draw(st.integers(d + 1, 7)), "d": d}


EXACT = "exact rational arithmetic: equality, no tolerance"
TIE = {"X": [["1", "0"], ["0", "1"]], "y": ["1", "-1"]}  # |Xᵀy| = (1, 1): both enter at once, β¹ = (1, −1)
N1 = {"X": [["0.5", "-2", "1"]], "y": ["3"]}
OVER = {"X": [["1", "0"], ["0", "1"], ["1", "1"]], "y": ["1", "2", "0"]}  # least squares (0, 1), loss 1/2

_ENTERS = Claim(key="SS.grows.enters", statement="every jump adds a coordinate to the support; a coordinate leaves "
                "only at a jump where another enters", inputs=_inputs(), check=check_enters, tolerance=EXACT,
                pinned=(LEAVES,), describe=_describe, grid=GRID, max_examples=60)

CLAIMS = (
    Claim(key="SS.loss", statement="the loss is non-increasing across the saddles of the jump process",
          inputs=_inputs(), check=check_loss, tolerance=EXACT, pinned=(LEAVES, N1), describe=_describe, grid=GRID,
          max_examples=60),
    Claim(key="SS.l1", statement="for n < d in general position the final saddle is a minimum-ℓ1 interpolator "
          "(exact duality certificate, and the LP's ℓ1 norm)", inputs=_inputs(underdetermined=True), check=check_l1,
          tolerance="certificate exact; LP ℓ1 norm within 1e-9 relative", pinned=(LEAVES, N1), describe=_describe,
          grid=GRID, max_examples=60),
    Claim(key="SS.grows", statement="no coordinate ever leaves the support (incremental learning adds coordinates "
          "only)", inputs=_inputs(), check=check_grows, tolerance=EXACT, pinned=(LEAVES,), refined=_ENTERS,
          describe=_describe, grid=GRID, max_examples=60),
    Claim(key="SS.first", statement="the first jump is at t̃₁ = n/(2‖Xᵀy‖∞); when one coordinate i attains it, the "
          "first saddle is ⟨x_i, y⟩/‖x_i‖² e_i", inputs=_inputs(), check=check_first, tolerance=EXACT,
          pinned=(LEAVES, N1, TIE), describe=_describe, grid=GRID, max_examples=60),
    Claim(key="SS.lsq", statement="for n > d with independent columns the final saddle is the least-squares "
          "solution (the loss may stay positive)", inputs=_overdetermined(), check=check_least_squares,
          tolerance=EXACT, pinned=(OVER,), describe=_describe, max_examples=60),
)


def _flow_claims() -> list[Claim]:
    """The flows' claims (flow_claims.py: the gradient flow at tiny α against the jump process)."""
    from .flow_claims import claims as flow_claims

    return list(flow_claims())


def claims() -> list[Claim]:
    return list(CLAIMS) + _flow_claims()
