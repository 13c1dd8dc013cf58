"""The α → 0 jump process of a two-layer diagonal linear network (THEORY.md, after Pesme & Flammarion,
NeurIPS 2023, Algorithm 1), in exact rational arithmetic.

Convention (THEORY.md): β = w₊² − w₋², w±(0) = α·1, L(β) = (1/n) Σ_i ½(⟨x_i, β⟩ − y_i)², gradient flow on
(w₊, w₋), accelerated time t̃ = t / ln(1/α). Then β_i(t̃) ≈ ±α^{2(1−|s_i(t̃)|)} with
s(t̃) = −2 ∫₀^t̃ ∇L(β) dt̃: s moves with slope −2∇L(β^k) while β sits at the saddle β^k; a coordinate becomes
active when |s_i| reaches 1, and the next saddle is the least squares on the active set under the signs of s.

Public API (used by the flow experiments):
    ``jump_process(X, y) -> JumpProcess``; X (n rows of d numbers) and y (n numbers) are exact numbers
    (Fraction, int, or decimal strings, read by :mod:`theorycheck.arith.exact`; a float is its binary value).
    ``JumpProcess.jumps: list[Jump]``; a ``Jump`` has ``.time: Fraction`` (t̃_k), ``.beta: tuple[Fraction, ...]``
    (the saddle β^k reached at t̃_k), ``.support: dict[int, int]`` (index → sign ±1 of β^k_i ≠ 0),
    ``.entered`` / ``.left: tuple[int, ...]`` (support gained / lost at this jump), ``.loss``, ``.active``
    (index → sign of the coordinates at |s_i| = 1: the sign constraints), ``.s`` (s at t̃_k), ``.unique``.
    Indices are 0-based in these fields (``as_dict()`` numbers coordinates from 1, as the columns x1..xd).
    ``JumpProcess.final`` (the last β; 0 when there is no jump), ``.non_unique: list[dict]`` (jump, reason,
    another minimiser), ``.status``, ``.as_dict()``. β⁰ = 0 at t̃ = 0 is not a jump.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from theorycheck.arith.exact import decimal_text
from theorycheck.solvers.exact_lsq import exact_data, gradient, loss, residual, sign_constrained_lsq

#: jumps allowed before the process is cut (the number of saddles is finite; this bounds the work)
MAX_JUMPS = 1_000


def _sign(v: Fraction) -> int:
    return (v > 0) - (v < 0)


@dataclass(frozen=True)
class Jump:
    """One saddle of the jump process: reached at accelerated time ``time`` = t̃_k (exact)."""

    time: Fraction
    beta: tuple[Fraction, ...]
    support: dict[int, int]
    entered: tuple[int, ...]
    left: tuple[int, ...]
    loss: Fraction
    active: dict[int, int]
    s: tuple[Fraction, ...]
    unique: bool | None

    def as_dict(self) -> dict:
        """Floats with exact strings beside them (``*_exact``); coordinates numbered from 1, as the columns
        x1, …, xd (the fields of the dataclass are 0-based indices)."""
        return {"time": float(self.time), "time_exact": decimal_text(self.time),
                "beta": [float(b) for b in self.beta], "beta_exact": [decimal_text(b) for b in self.beta],
                "support": {str(i + 1): s for i, s in sorted(self.support.items())},
                "entered": [i + 1 for i in self.entered], "left": [i + 1 for i in self.left],
                "loss": float(self.loss), "loss_exact": decimal_text(self.loss),
                "active": {str(i + 1): s for i, s in sorted(self.active.items())}, "unique": self.unique}


@dataclass
class JumpProcess:
    """The jump process of one problem: its saddles in time order (see the module docstring).
    ``nu``: the exact dual vector with s = Xᵀν at the end (an ℓ1 certificate when the loss is 0);
    ``status``: "stopped at a zero gradient", "jump budget" or "iteration budget"; ``kkt``: every saddle
    satisfies its KKT conditions exactly."""

    X: tuple
    y: tuple
    jumps: list[Jump] = field(default_factory=list)
    non_unique: list[dict] = field(default_factory=list)
    nu: tuple[Fraction, ...] = ()
    status: str = ""
    kkt: bool = True

    @property
    def final(self) -> tuple[Fraction, ...]:
        return self.jumps[-1].beta if self.jumps else tuple(Fraction(0) for _ in self.X[0])

    @property
    def final_loss(self) -> Fraction:
        return loss(self.X, self.y, self.final)

    @property
    def s(self) -> tuple[Fraction, ...]:
        return self.jumps[-1].s if self.jumps else tuple(Fraction(0) for _ in self.X[0])

    def as_dict(self) -> dict:
        return {"jumps": [j.as_dict() for j in self.jumps],
                "final": {"beta": [float(b) for b in self.final], "beta_exact": [decimal_text(b) for b in self.final],
                          "loss": float(self.final_loss), "loss_exact": decimal_text(self.final_loss),
                          "l1_norm": float(sum(abs(b) for b in self.final)),
                          "l1_norm_exact": decimal_text(sum((abs(b) for b in self.final), Fraction(0)))},
                "non_unique": [{"jump": u["jump"], "reason": u["reason"],
                                "other_beta_exact": [decimal_text(b) for b in u["other"]]} for u in self.non_unique],
                "status": self.status, "kkt": self.kkt}


def _next_time(s, g) -> Fraction:
    """The smallest τ > 0 with |s_i − 2τ g_i| = 1 for some i with g_i ≠ 0 (s_i moves towards −sign(g_i))."""
    return min((1 + _sign(gi) * si) / (2 * abs(gi)) for si, gi in zip(s, g) if gi != 0)


def jump_process(X, y, max_jumps: int = MAX_JUMPS, max_iterations: int | None = None) -> JumpProcess:
    """Algorithm 1 (THEORY.md) exactly: from β⁰ = 0, s = 0, t̃ = 0, until ∇L(β^k) = 0 or ``max_jumps``."""
    Xq, yq = exact_data(X, y)
    n, d = len(Xq), len(Xq[0])
    out = JumpProcess(Xq, yq, status="stopped at a zero gradient")
    beta, s, nu, t = (Fraction(0),) * d, [Fraction(0)] * d, [Fraction(0)] * n, Fraction(0)
    g = gradient(Xq, yq, beta)
    kw = {} if max_iterations is None else {"max_iterations": max_iterations}
    while any(g):
        if len(out.jumps) >= max_jumps:
            out.status = "jump budget"
            break
        tau, r = _next_time(s, g), residual(Xq, yq, beta)
        t += tau
        s = [si - 2 * tau * gi for si, gi in zip(s, g)]
        nu = [v - 2 * tau * ri / n for v, ri in zip(nu, r)]
        active = {i: _sign(si) for i, si in enumerate(s) if abs(si) == 1}
        sol = sign_constrained_lsq(Xq, yq, active, **kw)
        out.kkt = out.kkt and sol.kkt
        old = {i for i, b in enumerate(beta) if b != 0}
        beta, g = sol.beta, sol.gradient
        support = {i: _sign(b) for i, b in enumerate(beta) if b != 0}
        out.jumps.append(Jump(t, beta, support, tuple(sorted(set(support) - old)), tuple(sorted(old - set(support))),
                              sol.loss, active, tuple(s), sol.unique))
        if sol.unique is not True:
            out.non_unique.append({"jump": len(out.jumps), "reason": sol.reason,
                                   "other": sol.other if sol.other is not None else beta})
        if sol.status != "solved":
            out.status = "iteration budget"
            break
    out.nu = tuple(nu)
    return out
