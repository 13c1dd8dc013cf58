"""General layers: unbalanced, L = 1, several examples in real time (linear coordinates W)."""

from __future__ import annotations

import math

import mpmath
import numpy as np

from theorycheck.optimizers import get as get_optimizer
from theorycheck.solvers import critical
from theorycheck.solvers.backends import FloatBackend, MpBackend, log_abs_and_sign
from theorycheck.solvers.systems.base import Backend, EventAction, EventFn, FlowSystem, Thresholds, _sgn
from theorycheck.status import Status
from theorycheck.symbolic import forms as C
from theorycheck.vocabulary import TimeKind


class LayersSystem(FlowSystem):
    """Linear coordinates: W (L×d), or u (d) when the layers are tied (balanced). One
    example in rescaled time (``G = −z``) or n examples in real time
    (``G = (1/n) Σ ℓ'(m_i) z_i``); field ``−∇_W Lo(W + ε)`` built from the compiled
    layer gradient, perturbation and ℓ'.

    ℓ∞ switching: ε_kj = ρ sign(G_j Π_{m≠k} w_mj) is discontinuous where a weight or G_j
    crosses 0. Signs are locked per segment; at a crossing, Filippov's rule decides:
    both one-sided normal velocities of the same sign → cross; pointing into the surface
    from both sides → slide (a weight is held at 0; the other components follow the convex
    combination that keeps it there) until one side lets go."""

    name = "layers"
    #: ℓ2: stop at a critical point of Lo (the rule of :mod:`theorycheck.solvers.critical`)
    SINGULAR_LOG = critical.SINGULAR_LOG

    def __init__(self, bk: Backend, Z, W0, L: int, rho: float, optimizer: str, loss: str,
                 *, rescaled: bool, tied: bool, thr: Thresholds):
        self.bk, self.L, self.thr = bk, L, thr
        self.optimizer, self.loss = optimizer, loss
        self.opt = get_optimizer(optimizer)
        self.rescaled, self.tied = rescaled, tied
        self.time_kind = TimeKind.RESCALED if rescaled else TimeKind.REAL
        self.name = f"layers-{'tied' if tied else 'full'}-{'rescaled' if rescaled else 'real'}"
        self.grad_f = C.layer_gradient(L, bk.name)
        self.eps_f = C.perturbation(optimizer, bk.name)
        self.weighted = self.opt.weighted
        self.norm_f = C.norm_weight(optimizer, bk.name)  # T(w) of S = ‖T(W) ⊙ g‖₂, None when unweighted
        self.risk = C.empirical_risk(loss, bk.name)  # Lo and ∂Lo/∂β (overflow-free ℓ'), as dot products
        self.beta = C.predictor(L)  # β = w_1 ⊙ ⋯ ⊙ w_L (compiled; plain products, any array dtype)
        Z = np.asarray(Z, dtype=float)
        self.n, self.d = Z.shape
        self.Zf = Z
        self.Z = bk.array(Z)
        self.rho = bk.num(rho)
        W0 = np.asarray(W0, dtype=float)
        y0 = W0[0] if tied else W0.reshape(-1)
        self.y0 = bk.array(y0)
        self.lnW0 = self._lnnorm(self.y0)
        self.singular_off = False
        self.scale = float(np.max(np.abs(W0))) or 1.0
        # ℓ∞ bookkeeping: locked signs, sliding surfaces, dead coordinates
        self.linf = self.opt.discontinuous
        #: Filippov's rule on a switching surface (λ and λ f₊ + (1 − λ) f₋), from the symbolic layer
        self.slide = self.opt.sliding(L, loss, bk.name)
        self.sgnW = np.sign(W0[:1] if tied else W0).astype(int)
        self.sgnG = np.zeros(self.d, dtype=int)
        self.sliding: list[tuple] = []
        self.dead: set[int] = set()
        self.start_records = []
        self.mixed = [bool(np.any(Z[:, j] > 0) and np.any(Z[:, j] < 0)) for j in range(self.d)]
        self._fail: Status | None = None
        ln_lim = (680.0 - 2 * math.log(1 + self.d * float(np.max(np.abs(Z))))) / (2 * L)
        self.ln_limit = ln_lim
        if self.linf:
            W = self.W(self.y0)
            G = self.G(W)
            self.sgnG = np.array([_sgn(g) for g in G], dtype=int)
            y = np.array(self.y0, copy=True)
            for a in self._surfaces():
                if self._value(a, W, G) == 0 and not (a[0] == "G" and not self.mixed[a[1]]):
                    kind = self._handle_surface(a, y)
                    self.start_records.append((kind, a[-1], f"{a[0]}-surface at 0 at the start"))
                    W = self.W(y)
            self.y0 = y

    # -- shapes and pieces
    def W(self, y):
        if self.tied:
            return np.array([y] * self.L, dtype=y.dtype)
        return y.reshape(self.L, self.d)

    def flat(self, F):
        return F[0].copy() if self.tied else F.reshape(-1).copy()

    def G(self, W):
        """∂Lo/∂β (rescaled one example: −z)."""
        if self.rescaled:
            return -self.Z[0]
        return self.risk.gradient(self.beta(*W), self.Z, apply=self.bk.call)

    def grad(self, G, W):
        out = self.bk.call_multi(self.grad_f, self.L, G, *W)
        if W.dtype == object:
            return np.array(out, dtype=object).reshape(self.L, self.d)
        return np.stack(out)

    def _signs(self, overrides: dict):
        sW = np.array(self.sgnW if not self.tied else np.repeat(self.sgnW, self.L, axis=0), copy=True)
        sG = self.sgnG.copy()
        for a, v in overrides.items():
            if a[0] == "w":
                sW[a[1], a[2]] = v
            elif a[0] == "u":
                sW[:, a[1]] = v
            else:
                sG[a[1]] = v
        return sW, sG

    def _field_locked(self, W, overrides: dict | None = None):
        """−∇Lo(W + ε) with ℓ∞'s signs locked (and ``overrides`` applied)."""
        bk = self.bk
        if not self.opt.perturbs:
            What = W
        elif not self.opt.discontinuous:
            g = self.grad(self.G(W), W)
            if self.weighted:  # S = ‖T(W) ⊙ g‖₂ and ε(g, W, S) (ASAM), both from the symbolic ascent
                S = self._norm(bk.call(self.norm_f, W) * g)
                What = W + bk.call(self.eps_f, g, S, self.rho, W)
            else:
                S = self._norm(g)
                What = W + bk.call(self.eps_f, g, S, self.rho)
        else:
            sW, sG = self._signs(overrides or {})
            proxy = self.grad(bk.array(sG), bk.array(sW))
            What = W + bk.call(self.eps_f, proxy, bk.num(1), self.rho)
        return -self.grad(self.G(What), What)

    def _normal(self, a, W, F):
        """Rate of change of the surface function of ``a`` along the field F."""
        if a[0] == "w":
            return F[a[1], a[2]]
        if a[0] == "u":
            return F[0, a[1]]
        h = self.bk.complex_step(self.scale)
        Gc = self.G(W + F * ((1j if isinstance(self.bk, FloatBackend) else mpmath.mpc(0, 1)) * h))
        return Gc[a[1]].imag / h

    def _value(self, a, W, G):
        if a[0] == "w":
            return W[a[1], a[2]]
        if a[0] == "u":
            return W[0, a[1]]
        return G[a[1]]

    def _surfaces(self) -> list[tuple]:
        """Switching surfaces of ℓ∞ not currently sliding: weights (L ≥ 2) and, in real
        time, G_j for features whose examples have both signs."""
        if not self.linf:
            return []
        out: list[tuple] = []
        if self.L >= 2:
            if self.tied:
                out += [("u", j) for j in range(self.d) if j not in self.dead]
            else:
                out += [("w", k, j) for k in range(self.L) for j in range(self.d) if j not in self.dead]
        if not self.rescaled:
            out += [("G", j) for j in range(self.d) if self.mixed[j]]
        return [a for a in out if a not in self.sliding]

    def _coupled(self, a) -> bool:
        """Does the side of surface a change the field of other coordinates? Not for one
        example (coordinates are independent), not for tied even-L weights (β̂_j = ρ^L on
        both sides); yes otherwise."""
        if self.rescaled:
            return False
        return not (a[0] == "u" and self.L % 2 == 0)

    def _filippov(self, npl, nmi, Fp, Fm):
        """The sliding velocity λ f₊ + (1 − λ) f₋ with λ a₊ + (1 − λ) a₋ = 0 (a± the normal rates of the
        two sides; λ = ½ when they are equal)."""
        lam = self.slide.weight(npl, nmi) if nmi != npl else 0.5 + 0 * npl
        return self.slide.combine(lam, Fp, Fm)

    def _field(self, W, extra: dict | None = None):
        """The field with the current sliding surfaces' Filippov combinations."""
        extra = dict(extra or {})
        sliding = [a for a in self.sliding if a not in extra]
        if not sliding:
            F = self._field_locked(W, extra)
        elif self.rescaled:
            Fp = self._field_locked(W, {**extra, **{a: 1 for a in sliding}})
            Fm = self._field_locked(W, {**extra, **{a: -1 for a in sliding}})
            F = Fp.copy()
            for a in sliding:
                j = a[-1]
                F[:, j] = self._filippov(self._normal(a, W, Fp), self._normal(a, W, Fm), Fp[:, j], Fm[:, j])
        else:
            coupled = [a for a in sliding if self._coupled(a)]
            fixed = {a: 1 for a in sliding if not self._coupled(a)}
            if not coupled:
                F = self._field_locked(W, {**extra, **fixed})
            else:
                (a,) = coupled
                Fp = self._field_locked(W, {**extra, **fixed, a: 1})
                Fm = self._field_locked(W, {**extra, **fixed, a: -1})
                F = self._filippov(self._normal(a, W, Fp), self._normal(a, W, Fm), Fp, Fm)
        for a in sliding:
            if a[0] == "w":
                F[a[1], a[2]] = 0 * F[a[1], a[2]]
            elif a[0] == "u":
                F[:, a[1]] = 0 * F[:, a[1]]
        for j in self.dead:
            F[:, j] = 0 * F[:, j]
        return F

    def rhs(self, t, y):
        return self.flat(self._field(self.W(y)))

    # -- events
    def _norm(self, a):
        """‖a‖₂ without the squares' underflow or overflow in float64 (entries of 1e-200 or 1e200: a is scaled by
        its largest entry first); mpmath has no such range."""
        bk = self.bk
        if isinstance(bk, FloatBackend):
            s2 = self._sumsq_scaled(a)
            return math.sqrt(s2[0]) * s2[1]
        return bk.sqrt(np.array([bk.sumsq(a)], dtype=a.dtype))[0]

    @staticmethod
    def _sumsq_scaled(a) -> tuple[float, float]:
        """(q, m) with ‖a‖₂ = m·√q: m = 1 (q the plain sum of squares, bit for bit) where that sum is a normal
        number, else m = max|a_i| and q = Σ (a_i/m)²."""
        a = np.asarray(a, dtype=float)
        q = float(np.sum(np.square(a)))
        if 1e-290 < q < 1e290:
            return q, 1.0
        m = float(np.max(np.abs(a))) if a.size else 0.0
        if m == 0 or not math.isfinite(m):
            return (0.0 if m == 0 else math.inf), 1.0
        return float(np.sum(np.square(a / m))), m

    def _ln_norm_float(self, a) -> float:
        """ln ‖a‖₂ in float64 (as ln(Σ a²)/2 where that sum is a normal number; scaled otherwise)."""
        q, m = self._sumsq_scaled(a)
        if q == 0:
            return -math.inf
        if m == 1.0:
            return self.bk.log(self.bk.array([q]))[0] / 2
        return math.log(q) / 2 + math.log(m)

    def _lnS(self, W):
        g = self.grad(self.G(W), W)
        if isinstance(self.bk, FloatBackend):
            return self._ln_norm_float(g)
        S2 = self.bk.sumsq(g)
        if S2 == 0:
            return -math.inf
        return self.bk.log(self.bk.array([S2]))[0] / 2

    def _lnS_rel(self, W):
        """ln(‖∇Lo(W)‖ / ‖field‖): → −∞ where ℓ2-SAM's ε = ρ∇Lo/‖∇Lo‖ is undefined (W → 0,
        or a critical point of Lo); also → −∞ on separable data as Lo → 0 (the perturbed
        point's margins are smaller by an amount growing with ‖W‖): see :meth:`_lnS_loss`."""
        lnS = self._lnS(W)
        if lnS == -math.inf:
            return lnS
        return lnS - self._lnnorm(np.ravel(self._field(W)))

    def _lnLo(self, W):
        """ln Lo(W) from the compiled empirical risk; 0 in rescaled time (one example: the
        field is ∇Lo divided by |ℓ'(m)|, so there is no loss factor left to divide out)."""
        if self.rescaled:
            return 0.0
        lo = self.risk.value(self.beta(*W), self.Z, apply=self.bk.call)
        if lo <= 0:  # float underflow: the loss has vanished, no critical point with Lo > 0
            return -math.inf
        return self.bk.log(self.bk.array([lo]))[0]

    def _lnS_loss(self, W):
        """ln(‖∇Lo(W)‖ / Lo(W)), the relative gradient: → −∞ at a critical point of Lo with
        Lo > 0, bounded below on separable data with growing margins (⟨−∇Lo, W⟩ =
        L (1/n) Σ_i |ℓ'(m_i)| m_i, and |ℓ'| ≍ ℓ there); +∞ once Lo has underflowed to 0."""
        lnLo = self._lnLo(W)
        if lnLo == -math.inf:
            return math.inf
        return self._lnS(W) - lnLo

    def _singular(self, W, s_level, r_level):
        """< 0 once both ln‖∇Lo‖/‖field‖ and ln‖∇Lo‖/Lo are below their levels."""
        return critical.excess(self._lnS_rel(W), self._lnS_loss(W), s_level, r_level)

    def _lnnorm(self, y):
        if isinstance(self.bk, FloatBackend):
            return self._ln_norm_float(y)
        S2 = self.bk.sumsq(y)
        if S2 == 0:
            return -math.inf
        return self.bk.log(self.bk.array([S2]))[0] / 2

    def start_stop(self) -> Status | None:
        if self._fail:
            return self._fail
        if self.linf and self.L >= 2:  # every coordinate held at 0 (dead, or tied and sliding)
            held = set(self.dead) | {a[1] for a in self.sliding if a[0] == "u"}
            if len(held) == self.d:
                return Status.COLLAPSE
        if self._underflows(self.W(self.y0)):
            return Status.RANGE_LIMIT
        if self.opt.normalised and self.L >= 2 and self._lnS(self.W(self.y0)) == -math.inf:
            beta = self.beta(*self.W(self.y0))
            return Status.COLLAPSE if all(b == 0 for b in beta) else Status.STATIONARY
        return None

    def _underflows(self, W) -> bool:
        """float64 only: some β_j = Π_k w_kj, some gradient entry G_j Π_{m≠k} w_mj or (weighted step) some
        T(w) g rounds to 0 although none of its factors is 0 (α or z ~ 1e-300). The field is then below the
        number range: a zero read off it (a collapse, a stationary point) would be the rounding's, not the
        flow's."""
        if not isinstance(self.bk, FloatBackend):
            return False
        Wf = np.asarray(W, dtype=float)
        nonzero = np.all(Wf != 0, axis=0)  # coordinates with no factor 0
        if self.L >= 2 and np.any((np.prod(Wf, axis=0) == 0) & nonzero):
            return True
        with np.errstate(all="ignore"):
            G = np.asarray(self.G(Wf), dtype=float)
            g = self.grad(G, Wf)
            lost = (g == 0) & ((G != 0) & nonzero)[None, :]  # ∂Lo/∂w_kj rounded to 0
            if self.weighted:
                T = np.asarray(self.bk.call(self.norm_f, Wf), dtype=float)
                lost |= (T * g == 0) & (g != 0) & (T != 0)
        return bool(np.any(lost))

    def events(self, t0, y0) -> list[EventFn]:
        evs: list[EventFn] = []
        W0 = self.W(y0)
        if self.opt.normalised and self.L >= 2:
            c_level = self.lnW0 + self.thr.collapse_log
            evs.append(EventFn("collapse", -1, lambda t, y: self._lnnorm(y) - c_level, -1))
            if not self.singular_off:
                s_level, r_level = critical.levels(self._lnS_rel(W0), self._lnS_loss(W0))
                evs.append(EventFn("singular", -1, lambda t, y: self._singular(self.W(y), s_level, r_level), -1))
        ln0 = self._lnnorm(y0)
        blow = self.rescaled and self.L >= 3
        if isinstance(self.bk, FloatBackend):
            n_level = self.ln_limit if not blow else min(self.ln_limit, ln0 + self.thr.blowup_log / (self.L - 2))
            evs.append(EventFn("blowup" if blow else "norm_limit", -1, lambda t, y: self._lnnorm(y) - n_level, +1))
        elif blow:
            b_level = ln0 + self.thr.blowup_log / (self.L - 2)
            evs.append(EventFn("blowup", -1, lambda t, y: self._lnnorm(y) - b_level, +1))
        if self.linf:
            for a in self._surfaces():
                if a[0] == "G":
                    evs.append(EventFn("surface", a[-1], lambda t, y, a=a: self.G(self.W(y))[a[1]], 0, a))
                else:
                    idx = (a[1] if self.tied else a[1] * self.d + a[2])
                    evs.append(EventFn("surface", a[-1], lambda t, y, i=idx: y[i], 0, a))
            for a in self.sliding:
                def n_side(t, y, a=a, side=1):
                    W = self.W(y)
                    return self._normal(a, W, self._field(W, {a: side}))
                evs.append(EventFn("exit", a[-1], lambda t, y, a=a, f=n_side: f(t, y, a, 1), +1, (a, 1)))
                evs.append(EventFn("exit", a[-1], lambda t, y, a=a, f=n_side: f(t, y, a, -1), -1, (a, -1)))
        return evs

    def event_rate(self, ev: EventFn, t, y):
        """d ln‖W‖/dt = W·Ẇ/‖W‖² for blow-up and collapse (‖W‖ vanishes linearly); None
        otherwise (no extrapolation)."""
        if ev.name not in ("blowup", "collapse"):
            return None
        f = self.rhs(t, y)
        return sum(a * b for a, b in zip(y, f)) / sum(a * a for a in y)

    def _classify(self, a, W):
        Fp = self._field(W, {a: 1})
        Fm = self._field(W, {a: -1})
        return self._normal(a, W, Fp), self._normal(a, W, Fm)

    def _set_sign(self, a, v: int) -> None:
        if a[0] == "w":
            self.sgnW[a[1], a[2]] = v
        elif a[0] == "u":
            self.sgnW[0, a[1]] = v
        else:
            self.sgnG[a[1]] = v

    def _zero_weights(self, j: int, y) -> int:
        W = self.W(y)
        return sum(1 for k in range(self.L) if W[k, j] == 0)

    def _handle_surface(self, a, y) -> str:
        """Filippov at surface a (state y is modified in place when a weight is held at 0)."""
        W = self.W(y)
        if a[0] in ("w", "u"):
            idx = a[1] if a[0] == "u" else a[1] * self.d + a[2]
            y[idx] = 0 * y[idx]
            W = self.W(y)
        npl, nmi = self._classify(a, W)
        if npl > 0 and nmi > 0:
            self._set_sign(a, 1)
            return "cross"
        if npl < 0 and nmi < 0:
            self._set_sign(a, -1)
            return "cross"
        # slide (also the degenerate cases: a zero one-sided velocity)
        j = a[-1]
        if a[0] == "w" and self._zero_weights(j, y) >= 2:
            if self.L == 2 and self.rescaled:
                self.sliding = [b for b in self.sliding if b[-1] != j or b[0] == "G"]
                self.dead.add(j)
                for k in range(self.L):
                    y[k * self.d + j] = 0 * y[k * self.d + j]
                return "slide"
            self._fail = Status.SLIDING_UNSUPPORTED
            return "slide"
        if self._coupled(a) and any(self._coupled(b) for b in self.sliding):
            self._fail = Status.SLIDING_UNSUPPORTED
            return "slide"
        self.sliding.append(a)
        return "slide"

    def on_event(self, ev: EventFn, t, y) -> EventAction:
        if ev.name in ("collapse", "blowup", "norm_limit"):
            return EventAction(stop=Status(ev.name), records=[(ev.name, -1, "")])
        if ev.name == "singular":
            if not critical.away_from_zero(self._lnnorm(y), self.lnW0):  # on the way to a collapse: carry on
                new = self.copy()
                new.singular_off = True
                return EventAction(system=new, y=np.array(y, copy=True))
            return EventAction(stop=Status.CRITICAL_POINT, records=[("critical_point", -1, "‖∇Lo(w)‖ ≪ ‖∇Lo(w + ε)‖, ‖∇Lo(w)‖ ≪ Lo(w) with w ≠ 0")])
        new = self.copy()
        new.sgnW = self.sgnW.copy()
        new.sgnG = self.sgnG.copy()
        new.dead = set(self.dead)
        y = np.array(y, copy=True)
        if ev.name == "exit":
            a, side = ev.data
            new.sliding = [b for b in new.sliding if b != a]
            new._set_sign(a, side)
            records = [("unfreeze", a[-1], f"{a[0]}-surface, to side {side:+d}")]
        else:
            a = ev.data
            kind = new._handle_surface(a, y)
            records = [(kind, a[-1], f"{a[0]}-surface")]
        out = EventAction(system=new, y=y, records=records)
        out.stop = new.start_stop()
        return out

    def observe(self, t, y) -> tuple[np.ndarray, np.ndarray]:
        W = self.W(y)
        la = np.zeros(self.d)
        sg = np.ones(self.d, dtype=int)
        for k in range(self.L):
            for j in range(self.d):
                a, s = log_abs_and_sign(W[k, j])
                la[j] += a
                sg[j] *= s
        return la, sg

    def atol(self, rtol):
        tol = rtol * self.scale * 1e-3
        return np.array([tol] * int(np.size(self.y0)), dtype=object if isinstance(self.bk, MpBackend) else float)
