"""The pixel flow as a batch system (:class:`PixelFlow`): many members of an L-layer diagonal network on pixel data at
full size, every member (an optimizer, an init scale α, a radius ρ) in one matrix product per field evaluation;
the runs over it are :func:`theorycheck.batched.pixels.run_pixels`.

The model. A pixel is never negative, so a network with β = u^L (u > 0, THEORY.md's balanced
start α·1) predicts ⟨β, x⟩ > 0 for every image and cannot separate two classes. The network
here is THEORY.md's L-layer diagonal network on the doubled input x̃ = (x, −x) ∈ R^{2d} with
every layer started at α·1 (balanced): β̃ = u^L ∈ R^{2d}, and on the pixels
β = β̃_+ − β̃_− = u_+^L − u_−^L (β(0) = 0). Every formula is the one of THEORY.md's setting
for the data z̃_i = (z_i, −z_i): the flow, ε (ℓ2: the norm over all layers and all 2d
coordinates jointly) and the losses come compiled from :mod:`theorycheck.symbolic`.

Where nothing moves. A pixel that is 0 in every training image has G_j = 0, so its rate is 0
under GD, ℓ2-SAM (r_j = 1) and ℓ∞-SAM (sign 0 = 0): it stays at β_j = 0 and is left out of the
products (exactly).

Coordinates. L ≥ 2: θ = ln u (u stays > 0 under the flow), the several-examples forms
:func:`theorycheck.symbolic.forms.balanced_multi_log`; ℓ∞-SAM coordinates that slide to u_j = 0 are frozen there
(Filippov, as in :class:`~theorycheck.batched.systems.MultiExample`). L = 1: u itself (it may
change sign), ε from :func:`theorycheck.symbolic.forms.perturbation`.

Time. ``time_kind="t"``: real time. ``"tau"``: rescaled time dτ = (1/n) Σ_i |ℓ'(m̂_i)| dt at the
perturbed point (for one example THEORY.md's rescaled time; the path is the same — ε is
invariant under a positive factor of ∇Lo). The weights |ℓ'(m_i)| are handled in log space
(:func:`theorycheck.symbolic.forms.log_loss_functions`): relative to their largest they never underflow, so the
rescaled field stays finite however large the margins grow, and ε's direction is exact there.

Products. m = β Zᵀ and G = w Z/n, by :class:`~theorycheck.batched.products.Products` (dense BLAS or CSR).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from theorycheck.batched.ops import get_ops
from theorycheck.batched.products import Products
from theorycheck.batched.systems.base import EVENT_LOG, _ClockedTheta, log_square_summand
from theorycheck.errors import TheorycheckError
from theorycheck.optimizers import get as get_optimizer
from theorycheck.optimizers import supporting
from theorycheck.solvers.guards import scaled_norm
from theorycheck.status import CHATTERING, COLLAPSE, LOSS_REACHED
from theorycheck.symbolic import forms as C

__all__ = ["OPTIMIZER_CODES", "SAM_CODES", "PixelFlow"]

#: the optimizers and their codes inside a batch
#: (a weighted step, ASAM, is not among them: the batched forms take ε of the gradient alone)
OPTIMIZER_CODES = {o.name: i for i, o in enumerate(o for o in supporting("product", "logistic", 2) if not o.weighted)}
#: (name, code) of the SAM variants among them (an ascent step), and whether each is normalised (ℓ2)
SAM_CODES: tuple[tuple[str, int], ...] = tuple((n, c) for n, c in OPTIMIZER_CODES.items() if get_optimizer(n).perturbs)
_NORMALISED = {n: get_optimizer(n).normalised for n in OPTIMIZER_CODES}


class PixelFlow(_ClockedTheta):
    """The doubled diagonal network on pixels (module docstring) for members
    (``optimizers[b]``, ``alphas[b]``, ``rhos[b]``), depth ``L`` ∈ {1, 2, 3, …}, in time
    ``time_kind`` ("t" or "tau"). ``Z``: (n, d) rows z_i = y_i x_i. ``grid``: the output times;
    β is kept at each of them (``snapshots``, (B, T, d_active)). ``loss_target``: a member
    stops with status ``loss_reached`` at the first grid time where its training loss is at
    or below it."""

    observables = {"loss": (np.float64, np.nan), "log_loss": (np.float64, np.nan)}
    CHATTER_STEPS = 200
    #: ℓ∞: a pixel with |G_p| ≤ SLIDE_NEAR max_j |G_j| is on its surface for the sliding test
    SLIDE_NEAR = 1e-6

    def __init__(self, Z, optimizers: Sequence[str], alphas, rhos, *, L: int, time_kind: str = "t",
                 loss: str = "logistic", ops=None, grid=None, loss_target: float | None = None,
                 products: str = "auto"):
        self.ops = o = ops or get_ops("numpy")
        Z = np.asarray(Z, dtype=float)
        if Z.ndim != 2 or Z.shape[0] < 1 or not np.all(np.isfinite(Z)):
            raise TheorycheckError("Z must be a finite n×d array (rows z_i = y_i x_i)")
        if time_kind not in ("t", "tau"):
            raise TheorycheckError(f"time_kind {time_kind!r}: choose 't' (real) or 'tau' (rescaled)")
        L = int(L)
        if L < 1:
            raise TheorycheckError(f"depth must be ≥ 1, got {L}")
        bad = [op for op in optimizers if op not in OPTIMIZER_CODES]
        if bad:
            raise TheorycheckError(f"unknown optimizer(s) {', '.join(bad)}; choose from {', '.join(OPTIMIZER_CODES)}")
        alphas = np.asarray(alphas, float).reshape(-1)
        rhos = np.broadcast_to(np.asarray(rhos, float).reshape(-1), alphas.shape).copy()
        if len(optimizers) != alphas.size:
            raise TheorycheckError("one optimizer per member: optimizers, alphas (and rhos) must have equal lengths")
        if not (np.all(alphas > 0) and np.all(np.isfinite(alphas)) and np.all(rhos >= 0) and np.all(np.isfinite(rhos))):
            raise TheorycheckError("every member needs α > 0 and ρ ≥ 0, finite")
        self.active = np.flatnonzero(np.any(Z != 0, axis=0))  # always-zero pixels never move
        if self.active.size == 0:
            raise TheorycheckError("every pixel is 0 in every image: there is nothing to fit")
        Za = np.ascontiguousarray(Z[:, self.active])
        self.n, self.d_full = Z.shape
        self.d = da = self.active.size
        self.B, self.m, self.L, self.loss = alphas.size, 2 * da, L, loss
        self.time_kind = time_kind
        self.optimizers = list(optimizers)
        self.opt_np = np.array([OPTIMIZER_CODES[op] for op in optimizers], dtype=np.int64)
        self.alpha_np, self.rho_np = alphas, rhos
        self.products = Products(Za, o, products)
        self.rho = o.asarray(rhos)
        self.ln_ell, self.ln_dell = C.log_loss_functions(loss, o.name)
        self.beta_of = C.predictor(L, o.name)
        if L >= 2:
            self.forms = {op: C.balanced_multi_log(L, op, o.name) for op, _ in SAM_CODES}
            self.rate_form = C.balanced_multi_rate(L, o.name)
        else:
            self.eps = {op: C.perturbation(op, o.name) for op, _ in SAM_CODES}
        # max_i ‖z_i‖₂ without its squares leaving float64 (np.linalg.norm was 0 at 1e-300: a division
        # by zero, and inf at 1e300: NaN states)
        self.c = float(scaled_norm(Za, axis=1).max())
        self.dead = o.zeros((self.B, 2 * da), dtype=bool)
        self.events = {"collapse": np.full(self.B, np.inf), "first_zero": np.full(self.B, np.inf),
                       "event_time_error": np.zeros(self.B)}
        self.grid = None if grid is None else np.asarray(grid, float)
        T = 0 if grid is None else self.grid.size
        self.snapshots = np.full((self.B, T, da), np.nan)
        self.loss_target = loss_target
        self.reached = np.zeros(self.B, dtype=bool)
        self.loss0 = float(C.stable_loss_functions(loss, "numpy")[0](0.0))
        # chattering detector (ℓ∞): accepted steps since the last check and the time there
        self._acc = np.zeros(self.B, dtype=np.int64)
        self._tau_mark = np.zeros(self.B)
        # ℓ∞ Filippov sliding (one surface G_p = 0 per member): the pixel p (−1: none), the sign
        # of G at the last accepted step, and the side forced while a one-sided field is evaluated
        self.sliding = np.full(self.B, -1, dtype=np.int64)
        self._gsign = np.zeros((self.B, da), dtype=np.int8)
        self._force = None
        self.slide_forms = C.sliding_forms(L, loss, o.name)
        self.events.update(first_sliding=np.full(self.B, np.inf), sliding_entries=np.zeros(self.B),
                           sliding_time=np.zeros(self.B))
        self._slide_since = np.full(self.B, np.nan)

    # ------------------------------------------------------------------ the model
    def initial(self):
        o = self.ops
        a = np.repeat(self.alpha_np[:, None], 2 * self.d, axis=1)
        return o.zeros(self.B), o.asarray(np.log(a) if self.L >= 2 else a)

    def _u(self, idx, y):
        o = self.ops
        if self.L == 1:
            return y
        with o.errstate():
            return o.where(self.dead[idx], 0.0, o.exp(y))

    def signed_beta(self, u):
        """β = β̃_+ − β̃_− on the active pixels, β̃ = u^L (compiled predictor)."""
        bt = self.beta_of(*([u] * self.L))
        return bt[:, : self.d] - bt[:, self.d:]

    def _weights(self, beta):
        """(ln max_i |ℓ'(m_i)|, |ℓ'(m_i)| / max, m) per member: log-space weights."""
        o = self.ops
        m = self.products.margins(beta)
        with o.errstate():
            a = self.ln_dell(m)
        A = o.amax(a, 1)
        return A, o.exp(a - A[:, None]), m

    def _grad(self, w):
        """G̃ = (G, −G) with G = −(1/n) Σ_i w_i z_i (∂Lo/∂β up to the factor e^A)."""
        G = -self.products.weighted_sum(w) * (1.0 / self.n)
        return self.ops.cat([G, -G], 1)

    def field(self, idx, y):
        """(du/dt or dθ/dt in the member's time, ln of the real-time factor): the flow's rate."""
        o = self.ops
        idx_np = o.to_numpy(idx)
        if self._force is None and np.any(self.sliding[idx_np] >= 0):
            return self._sliding_field(idx, idx_np, y)
        oc = self.opt_np[idx_np]
        u = self._u(idx, y)
        A, w, _ = self._weights(self.signed_beta(u))
        Gt = self._grad(w)
        Gs = Gt if self._force is None else self._forced_signs(Gt)  # only the ℓ∞ perturbation's signs
        sam = np.flatnonzero(oc != 0)
        Gh, Ah, wh = Gt, A, w
        if self.L >= 2:
            r = o.where(self.dead[idx], 0.0, 1.0)
            for op, code in SAM_CODES:
                sel = np.flatnonzero(oc == code)
                if sel.size == 0:
                    continue
                si = o.asarray(sel, dtype=int)
                f = self.forms[op]
                th, G = y[si], Gs[si]
                with o.errstate():
                    if _NORMALISED[op]:
                        # ln(term of S²) without G² leaving float64 (data at 1e±300)
                        ls = o.where(self.dead[idx][si], -math.inf, log_square_summand(o, f.log_summand, G, th))
                        lnS = 0.5 * o.logsumexp(ls, 1)[:, None]
                    else:
                        lnS = 0.0
                    rr = f.ratio(G, th, lnS, self.rho[idx][si][:, None]) * 1.0
                r[si] = o.where(self.dead[idx][si], 0.0, rr)
            uh = r * u
        else:
            uh = u
            for op, code in SAM_CODES:
                sel = np.flatnonzero(oc == code)
                if sel.size == 0:
                    continue
                si = o.asarray(sel, dtype=int)
                G = Gs[si]
                # ‖∇Lo‖ over the 2d coordinates (one layer), as max|G|·‖G/max|G|‖ (G² leaves float64 at 1e±154)
                top = o.amax(o.abs(G), 1)[:, None]
                S = top * o.sqrt(o.sum((G / o.where(top > 0, top, 1.0)) ** 2, 1))[:, None]
                uh = uh * 1.0 if uh is u else uh
                uh[si] = u[si] + self.eps[op](G, o.where(S > 0, S, 1.0), self.rho[idx][si][:, None])
        if sam.size:
            si = o.asarray(sam, dtype=int)
            Ah_s, wh_s, _ = self._weights(self.signed_beta(uh[si]))
            Gh, Ah, wh = Gt * 1.0, A * 1.0, w * 1.0
            Gh[si], Ah[si], wh[si] = self._grad(wh_s), Ah_s, wh_s
        if self.L >= 2:
            rate = o.where(self.dead[idx], 0.0, self.rate_form(Gh, r, y))
        else:
            rate = -Gh
        if self.time_kind == "t":
            with o.errstate():
                rate = rate * o.exp(Ah)[:, None]
        else:
            rate = rate / o.mean(wh, 1)[:, None]
        return rate

    # ------------------------------------------------------------ ℓ∞-SAM: Filippov sliding on G_p = 0
    def _forced_signs(self, Gt):
        """G̃ with pixel p's two coordinates given the side's sign (ℓ∞ reads only the signs)."""
        rows, p, side = self._force
        Gs = Gt * 1.0
        Gs[rows, p] = float(side)
        Gs[rows, p + self.d] = -float(side)
        return Gs

    def _one_sided(self, idx, y, p_np, side):
        """The field of the members idx with sign(G_p) forced to ``side`` (±1) at their pixels p."""
        o = self.ops
        self._force = (o.arange(len(p_np)), o.asarray(p_np, dtype=int), side)
        try:
            return self.field(idx, y)
        finally:
            self._force = None

    def _gradient_rate(self, idx, y, rate, p_np):
        """dG_p/dt along ``rate`` (up to a positive factor per member, the same for every rate at
        this point): (1/n) Σ_i ℓ''(m_i) ṁ_i z_ip with ṁ = Z dβ/dt (closed_forms, sliding)."""
        o = self.ops
        f = self.slide_forms
        u = self._u(idx, y)
        with o.errstate():
            c = o.where(self.dead[idx], 0.0, f.coordinate_rate(rate, y) * 1.0)
        bdot = c[:, : self.d] - c[:, self.d:]
        m = self.products.margins(self.signed_beta(u))
        with o.errstate():
            lc = f.log_curvature(m)
            wc = o.exp(lc - o.amax(lc, 1)[:, None])
        zp = self.products.columns(p_np)  # (k, n): the column z_·p of each member
        return o.sum(wc * self.products.margins(bdot) * zp, 1)

    def _sides(self, idx, y, p_np):
        """(f₊, f₋, a₊, a₋) of members idx on their surfaces G_p = 0."""
        fp, fm = self._one_sided(idx, y, p_np, 1), self._one_sided(idx, y, p_np, -1)
        return fp, fm, self._gradient_rate(idx, y, fp, p_np), self._gradient_rate(idx, y, fm, p_np)

    def _sliding_field(self, idx, idx_np, y):
        """The field with the Filippov velocity λ f₊ + (1 − λ) f₋ for the members that slide
        (λ from closed_forms.sliding_weight, clipped to [0, 1] off the sliding region)."""
        o = self.ops
        on = self.sliding[idx_np] >= 0
        rate = o.zeros((len(idx_np), y.shape[1]))
        if (~on).any():
            off = o.asarray(np.flatnonzero(~on), dtype=int)
            rate[off] = self.field(idx[off], y[off])
        k = o.asarray(np.flatnonzero(on), dtype=int)
        p_np = self.sliding[idx_np[on]]
        fp, fm, ap, am = self._sides(idx[k], y[k], p_np)
        with o.errstate():
            den = am - ap
            lam = o.where(den > 0, self.slide_forms.weight(ap, o.where(den > 0, am, ap + 1.0)), 0.5)
            lam = o.minimum(o.maximum(lam, 0.0), 1.0)
        rate[k] = self.slide_forms.combine(lam[:, None], fp, fm)
        return rate

    def _attracting(self, idx, y, p_np):
        """Members whose surface G_p = 0 attracts from both sides here (a₊ < 0 < a₋)."""
        _, _, ap, am = self._sides(idx, y, p_np)
        return (self.ops.to_numpy(ap) < 0) & (self.ops.to_numpy(am) > 0)

    def _update_sliding(self, idx, idx_np, tau_np, y, stuck):
        """After an accepted step of ℓ∞ members: a member that slides leaves its surface where it
        stops attracting; a member that does not slide enters sliding on a pixel whose G_p changed
        sign in this step (or, when the chattering detector fired, ``stuck``, on its smallest
        |G_p|) if that surface attracts from both sides. Returns (members whose field changed,
        members on which the detector fired and that now slide)."""
        o = self.ops
        changed = np.zeros(len(idx_np), dtype=bool)
        rescued = np.zeros(len(idx_np), dtype=bool)
        lin = np.flatnonzero(self.opt_np[idx_np] == 2)
        if lin.size == 0:
            return changed, rescued
        il = o.asarray(lin, dtype=int)
        _, w, _ = self._weights(self.signed_beta(self._u(idx[il], y[il])))
        G = o.to_numpy(self._grad(w))[:, : self.d]
        sg = np.sign(G).astype(np.int8)
        b = idx_np[lin]
        old = self._gsign[b]
        self._gsign[b] = sg
        on = self.sliding[b] >= 0
        if on.any():  # leave where the surface stops attracting
            k = np.flatnonzero(on)
            keep = self._attracting(idx[o.asarray(lin[k], dtype=int)], y[o.asarray(lin[k], dtype=int)],
                                    self.sliding[b[k]])
            gone = k[~keep]
            self.events["sliding_time"][b[gone]] += tau_np[lin[gone]] - self._slide_since[b[gone]]
            self.sliding[b[gone]] = -1
            changed[lin[gone]] = True
        # a surface crossed in this step, or one the member is creeping up to (rejected steps across
        # it): |G_p| ≤ SLIDE_NEAR max_j |G_j|
        scale = np.max(np.abs(G), axis=1, keepdims=True)
        crossed = ((sg != old) & (old != 0)) | (np.abs(G) <= self.SLIDE_NEAR * scale)
        cand = np.full(lin.size, -1, dtype=np.int64)
        for i in np.flatnonzero(~on & (crossed.any(axis=1) | stuck[lin])):
            cols = np.flatnonzero(crossed[i]) if crossed[i].any() else np.arange(self.d)
            cand[i] = cols[np.argmin(np.abs(G[i, cols]))]
        k = np.flatnonzero(cand >= 0)
        if k.size:
            ik = o.asarray(lin[k], dtype=int)
            ok = self._attracting(idx[ik], y[ik], cand[k])
            enter = k[ok]
            if enter.size:
                bb = b[enter]
                self.sliding[bb] = cand[enter]
                self._slide_since[bb] = tau_np[lin[enter]]
                self.events["sliding_entries"][bb] += 1
                first = ~np.isfinite(self.events["first_sliding"][bb])
                self.events["first_sliding"][bb[first]] = tau_np[lin[enter]][first]
                changed[lin[enter]] = True
                rescued[lin[enter]] = stuck[lin[enter]]
        return changed, rescued

    def theta_rate(self, idx, tau, y):
        return self.field(idx, y)

    def after_step(self, idx, tau, y, dtau, dy):
        o = self.ops
        idx_np, tau_np = o.to_numpy(idx), o.to_numpy(tau)
        codes = np.zeros(len(idx_np), dtype=int)
        codes[self.reached[idx_np]] = LOSS_REACHED
        # ℓ∞-SAM on several examples: where some G_j changes sign, ε_j = ρ sign(g_j) jumps and the
        # steps can shrink to nothing; CHATTER_STEPS accepted steps that advance the member's time
        # by less than 1e-3 of it (and of its scale 1/c) stop it (the discrete algorithm runs there)
        # before it stops one, the member may enter Filippov sliding on one surface (then it goes on)
        self._acc[idx_np] += 1
        due = self._acc[idx_np] >= self.CHATTER_STEPS
        stuck_all = np.zeros(len(idx_np), dtype=bool)
        if due.any():
            b = idx_np[due]
            moved = tau_np[due] - self._tau_mark[b]
            stuck = (moved < 1e-3 * np.maximum(tau_np[due], 1.0 / self.c)) & (self.opt_np[b] == 2)
            stuck_all[np.flatnonzero(due)[stuck]] = True
            self._tau_mark[b], self._acc[b] = tau_np[due], 0
        slid, rescued = self._update_sliding(idx, idx_np, tau_np, y, stuck_all)
        codes[stuck_all & ~rescued] = CHATTERING
        changed = slid if slid.any() else None
        if self.L >= 2:
            r = dy / dtau[:, None]
            rc = r * (1.0 / self.c)
            big = -math.exp(EVENT_LOG)
            live = ~self.dead[idx]
            oc = self.opt_np[idx_np]
            linf = o.asarray(oc == 2, dtype=bool)[:, None]
            dead = self._mark_dead(idx, idx_np, tau_np, live & (rc < big) & linf, r)
            if dead is not None:
                changed = dead if changed is None else (changed | dead)
            top = o.to_numpy(o.amax(o.where(live, rc, -math.inf), 1))
            collapse = ((oc == 1) & (top < big)) | ((oc == 2) & o.to_numpy(o.all(self.dead[idx], 1)))
            codes[(codes == 0) & collapse] = COLLAPSE
            self.events["collapse"][idx_np[codes == COLLAPSE]] = tau_np[codes == COLLAPSE]
        return codes, changed

    def observe(self, idx, tau, y):
        return self.observe_beta(idx, tau, self.signed_beta(self._u(idx, y)))

    def observe_beta(self, idx, tau, beta):
        """Training loss (and its log) of β for members idx at output time tau; keeps β."""
        o = self.ops
        idx_np = o.to_numpy(idx)
        m = self.products.margins(beta)
        with o.errstate():
            ll = self.ln_ell(m)
        mx = o.amax(ll, 1)
        log_loss = mx + o.log(o.sum(o.exp(ll - mx[:, None]), 1) / self.n)
        loss = o.exp(log_loss)
        if self.grid is not None and tau is not None:
            k = np.searchsorted(self.grid, o.to_numpy(tau))
            self.snapshots[idx_np, k] = o.to_numpy(beta)
        if self.loss_target is not None:
            self.reached[idx_np[o.to_numpy(loss) <= self.loss_target]] = True
        return {"loss": loss, "log_loss": log_loss}

    def fill(self, idx, codes):
        return {}

    def metadata(self) -> dict:
        return {"system": "pixels-doubled-diagonal", "L": self.L, "loss": self.loss, "time_kind": self.time_kind,
                "n": self.n, "d": self.d_full, "d_active": self.d,
                "clock": "dt/ds = 1/(1 + |rate|_2/max_i |z_i|_2)"}
