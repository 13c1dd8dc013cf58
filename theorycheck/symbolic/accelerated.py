"""The depth-2 signed flow in the accelerated log chart of tiny scales (the saddle-to-saddle regime).

From the solved flow of :mod:`theorycheck.symbolic.regression` (w₊ = α e^{−2G}, w₋ = α e^{2G}, G = ∫₀ᵗ ∇L,
β = w₊² − w₋²) with λ = ln(1/α), accelerated time t̃ = t/λ and s = −2G/λ:

- β(s) = e^{2λ(s−1)} − e^{−2λ(s+1)} (= −2α² sinh(4G), written so that only λ, never α, is a number);
- ds/dt̃ = −2 ∇L(β) (dG/dt = ∇L, dt = λ dt̃), independent of λ;
- |β_j| is of order one where |s_j| = 1: the threshold of the jump process.

Derived here by substitution (sympy), compiled by :mod:`theorycheck.symbolic.compiler`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

from theorycheck.symbolic import regression as rg
from theorycheck.symbolic.compiler import lambdify

__all__ = ["AcceleratedForms", "accelerated_beta", "accelerated_field", "accelerated_forms", "lam", "s", "tt"]

lam = sp.Symbol("lambda", positive=True)  # ln(1/α)
s = sp.Symbol("s", real=True)  # −2G/λ
tt = sp.Symbol("t_acc", nonnegative=True)  # accelerated time t̃ = t/λ


def _substitution() -> dict:
    return {rg.alpha: sp.exp(-lam), rg.G: -lam * s / 2}


def accelerated_beta() -> sp.Expr:
    """β(s; λ): pm_beta(2) at the solved w± (pm_solution(2)), α = e^{−λ}, G = −λs/2."""
    wp, wm = rg.pm_solution(2)
    b = rg.pm_beta(2).subs({rg.wp: wp, rg.wm: wm}).subs(_substitution())
    return sp.powsimp(sp.expand(b), combine="exp")


def accelerated_field() -> sp.Expr:
    """ds/dt̃ per unit of g = ∂L/∂β_j: ds/dG · dG/dt · dt/dt̃ = (−2/λ)·g·λ (a sympy simplification)."""
    s_of_G = -2 * rg.G / lam
    return sp.simplify(sp.diff(s_of_G, rg.G) * rg.g * lam)


def solution_check() -> sp.Expr:
    """0 when pm_solution(2) solves pm_field(2) (dw/dt = ∂w/∂G · g): the chart's premise, for tests."""
    wp, wm = rg.pm_solution(2)
    fp, fm = rg.pm_field(2)
    sub = {rg.wp: wp, rg.wm: wm}
    return sp.simplify(sp.diff(wp, rg.G) * rg.g - fp.subs(sub)) + sp.simplify(sp.diff(wm, rg.G) * rg.g - fm.subs(sub))


@dataclass(frozen=True)
class AcceleratedForms:
    """Compiled: ``beta(s, lam)``, ``rate(g, lam)`` (= ds/dt̃), ``loss(p, y)``, ``loss_grad(p, y)`` (∂ℓ/∂p)."""

    beta: Callable
    rate: Callable
    loss: Callable
    loss_grad: Callable


@lru_cache(maxsize=4)
def accelerated_forms(backend: str = "numpy") -> AcceleratedForms:
    """The chart's forms for ``backend`` ("numpy" or "mpmath")."""
    return AcceleratedForms(beta=lambdify((s, lam), accelerated_beta(), backend),
                            rate=lambdify((rg.g, lam), accelerated_field(), backend),
                            loss=lambdify((rg.p_, rg.y_), rg.squared_loss(), backend),
                            loss_grad=lambdify((rg.p_, rg.y_), rg.squared_loss_derivative(), backend))
