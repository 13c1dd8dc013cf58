"""The symbolic layer, part 1: the model and its flows built from first principles.

Everything here is constructed, not typed in: β(w) = w_1 ⊙ … ⊙ w_L, the empirical loss,
its gradient (``sympy.diff``), the SAM perturbations and the flows. The formulas that
THEORY.md states (balanced fields, solved flows, thresholds) live in
:mod:`theorycheck.symbolic.closed_forms`; ``proofs/`` shows that the two agree.

Shapes: layers are an ``L×d`` :class:`sympy.Matrix` (row k = layer k), data an ``n×d``
matrix of ``z_i = y_i x_i`` (row i = example i), a predictor a ``1×d`` row.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import sympy as sp

from theorycheck.optimizers.registry import check_optimizer, names, registered  # noqa: F401  (the registry's)

# the loss names and their checks live in one place (a SettingError is a ValueError)
from theorycheck.vocabulary import LOSSES, check_loss  # noqa: F401


def __getattr__(name: str):
    """``OPTIMIZERS``: the registered optimizers of the default sets (:attr:`Optimizer.default_sets`)
    whose one-example rescaled flow exists (their ascent is one full-batch step, invariant under
    positive scaling of the gradient: GD, ℓ2-SAM, ℓ∞-SAM), in registration order; the flows of this
    module and :mod:`closed_forms` take each of them (and ASAM, named)."""
    if name == "OPTIMIZERS":
        return tuple(n for n in names() if registered(n).default_sets and not ascent_of(n).per_example
                     and ascent_of(n).scale_invariant)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

#: the argument of the per-example loss ℓ(s)
s = sp.Symbol("s", real=True)
#: the SAM radius ρ
rho = sp.Symbol("rho", positive=True)
#: real time t and rescaled time τ
t = sp.Symbol("t", nonnegative=True)
tau = sp.Symbol("tau", nonnegative=True)


def loss_expr(loss: str = "logistic") -> sp.Expr:
    """ℓ(s): logistic ``log(1 + e^{-s})`` or exponential ``e^{-s}`` (THEORY.md, Setting)."""
    check_loss(loss)
    if loss == "logistic":
        return sp.log(1 + sp.exp(-s))
    return sp.exp(-s)


def loss_derivative(loss: str = "logistic") -> sp.Expr:
    """ℓ'(s), obtained by differentiation (negative for both losses)."""
    return sp.diff(loss_expr(loss), s)


def layer_symbols(L: int, d: int, prefix: str = "w") -> sp.Matrix:
    """An ``L×d`` matrix of real symbols ``w{k}_{j}`` (1-based k, j)."""
    return sp.Matrix(L, d, lambda k, j: sp.Symbol(f"{prefix}{k + 1}_{j + 1}", real=True))


def data_symbols(n: int, d: int, prefix: str = "z") -> sp.Matrix:
    """An ``n×d`` matrix of real symbols ``z{i}_{j}``; for n = 1 the names are ``z{j}``."""
    if n == 1:
        return sp.Matrix(1, d, lambda _, j: sp.Symbol(f"{prefix}{j + 1}", real=True))
    return sp.Matrix(n, d, lambda i, j: sp.Symbol(f"{prefix}{i + 1}_{j + 1}", real=True))


def predictor(W: sp.Matrix) -> sp.Matrix:
    """β(w) = w_1 ⊙ … ⊙ w_L, a ``1×d`` row."""
    return sp.Matrix(1, W.cols, lambda _, j: sp.Mul(*W[:, j]))


def product_of_others(W: sp.Matrix) -> sp.Matrix:
    """``P[k, j] = Π_{m≠k} w_{m,j}`` = ∂β_j/∂w_{k,j} (1 when L = 1)."""
    return sp.Matrix(W.rows, W.cols, lambda k, j: sp.Mul(*[W[m, j] for m in range(W.rows) if m != k]))


def margins(W: sp.Matrix, Z: sp.Matrix) -> sp.Matrix:
    """m_i = <β(w), z_i>, an ``n×1`` column."""
    return Z * predictor(W).T


def empirical_loss(W: sp.Matrix, Z: sp.Matrix, loss: str = "logistic") -> sp.Expr:
    """Lo(w) = (1/n) Σ_i ℓ(<β(w), z_i>)."""
    ell = loss_expr(loss)
    m = margins(W, Z)
    return sp.Add(*[ell.subs(s, m[i]) for i in range(Z.rows)]) / Z.rows


def gradient(expr: sp.Expr, W: sp.Matrix) -> sp.Matrix:
    """∇_W expr, same shape as W (by ``sympy.diff``)."""
    return W.applyfunc(lambda w: sp.diff(expr, w))


# ---------------------------------------------------------------- the ascent steps ε (one per optimizer)
#: one entry g of the full gradient, the weight w it belongs to, and the joint norm S over all layers:
#: S = ‖∇Lo‖₂, or S = ‖T(w) ⊙ ∇Lo‖₂ for an ascent with a norm weight T (:attr:`Ascent.norm_weight`, ASAM)
g_coord = sp.Symbol("g", real=True)
w_coord = sp.Symbol("w", real=True)
grad_norm = sp.Symbol("S", positive=True)


@dataclass(frozen=True, eq=False)
class Ascent:
    """The symbolic half of an optimizer: its ascent step ε for one gradient entry g at its weight w given
    the joint norm S (``formula(g, w, S, radius)``), the weight T(w) of one entry in that norm
    (``norm_weight``: S² = Σ (T(w) g)² over every entry of every layer; None: T = 1, S = ‖∇Lo‖₂), and
    whether it is taken per example (1-SAM: ε_i from ∇ℓ_i, the perturbed gradients averaged). Every
    property below is read off the formula, so code asks the formula what it is instead of comparing
    optimizer names."""

    formula: Callable[[sp.Expr, sp.Expr, sp.Expr, sp.Expr], sp.Expr]
    per_example: bool = False
    text: str = ""
    norm_weight: Callable[[sp.Expr], sp.Expr] | None = None

    def coordinate(self, radius: sp.Expr = rho) -> tuple[sp.Symbol, sp.Symbol, sp.Expr]:
        """(g, S, ε(g, w, S)): the ascent step of one entry (:func:`perturbation_coordinate`); ε contains
        :data:`w_coord` when the step depends on the weight (:attr:`weighted`)."""
        return g_coord, grad_norm, sp.sympify(self.formula(g_coord, w_coord, grad_norm, radius))

    def weight(self, w: sp.Expr = w_coord) -> sp.Expr:
        """T(w), the weight of the entry at w in the joint norm (1 for an unweighted norm)."""
        return sp.Integer(1) if self.norm_weight is None else sp.sympify(self.norm_weight(w))

    def norm_term(self, g: sp.Expr, w: sp.Expr) -> sp.Expr:
        """(T(w) g)²: one entry's term of S², the single definition of the joint norm."""
        return (self.weight(w) * g) ** 2

    def norm(self, g, w) -> sp.Expr:
        """S = sqrt(Σ (T(w) g)²) over the entries of ``g`` with the weights ``w`` (same shapes)."""
        return sp.sqrt(sp.Add(*[self.norm_term(gi, wi) for gi, wi in zip(list(g), list(w))]))

    def at(self, g: sp.Expr, w: sp.Expr, S: sp.Expr, radius: sp.Expr = rho) -> sp.Expr:
        """ε of the entry g at weight w with joint norm S."""
        _, S_sym, eps = self.coordinate(radius)
        return eps.subs({g_coord: g, w_coord: w, S_sym: S}, simultaneous=True)

    @cached_property
    def trivial(self) -> bool:
        """ε ≡ 0 (gradient descent): ρ plays no part."""
        return self.coordinate()[2] == 0

    @cached_property
    def uses_norm(self) -> bool:
        """ε depends on the joint norm S (the normalised steps): its field is singular where S = 0."""
        return grad_norm in self.coordinate()[2].free_symbols

    @cached_property
    def weighted(self) -> bool:
        """ε depends on the weight w itself, or S weighs the entries by T(w) (ASAM): the step is not a
        function of the gradient alone, so the balanced closed forms of ε(g) do not apply."""
        return w_coord in self.coordinate()[2].free_symbols or (self.uses_norm and self.weight() != 1)

    @cached_property
    def discontinuous(self) -> bool:
        """ε jumps where an entry of the gradient changes sign (the ℓ∞ step): the flow needs Filippov's
        sliding rule on those surfaces."""
        return self.coordinate()[2].has(sp.sign)

    @cached_property
    def scale_invariant(self) -> bool:
        """ε(c g, w, c S) = ε(g, w, S) for every c > 0. Then a positive factor common to the gradient (the
        one-example −ℓ'(m) of THEORY.md, "Rescaled flows") leaves the perturbed point unchanged, and
        the one-example flow has its rescaled time τ; an unnormalised step (n-SAM, 1-SAM) has none."""
        c = sp.Symbol("c", positive=True)
        g, S, eps = self.coordinate()
        return sp.simplify(eps.subs({g: c * g, S: c * S}, simultaneous=True) - eps) == 0


def no_ascent(g, w, S, radius):
    """Gradient descent: ε = 0."""
    return sp.Integer(0)


def l2_ascent(g, w, S, radius):
    """ℓ2-SAM: ε = ρ g/‖g‖₂, the maximiser of ⟨g, ε⟩ on the ℓ2 ball of radius ρ (norm over all layers)."""
    return radius * g / S


def sign_ascent(g, w, S, radius):
    """ℓ∞-SAM: ε = ρ sign(g), the maximiser of ⟨g, ε⟩ on the ℓ∞ ball of radius ρ."""
    return radius * sp.sign(g)


def gradient_ascent(g, w, S, radius):
    """Unnormalised SAM (Andriushchenko & Flammarion 2022): ε = ρ g, one ascent step of size ρ."""
    return radius * g


NO_ASCENT = Ascent(no_ascent, text="0")
L2_ASCENT = Ascent(l2_ascent, text="rho*g/||g||_2")
SIGN_ASCENT = Ascent(sign_ascent, text="rho*sign(g)")
GRADIENT_ASCENT = Ascent(gradient_ascent, text="rho*g")
#: 1-SAM: the same step, from each example's own gradient ∇ℓ_i
EXAMPLE_GRADIENT_ASCENT = Ascent(gradient_ascent, per_example=True, text="rho*g_i (per example)")


def ascent_of(optimizer) -> Ascent:
    """The :class:`Ascent` of ``optimizer``: an Ascent, an optimizer object (its ``ascent``) or a
    registered optimizer's name (:mod:`theorycheck.optimizers.registry`)."""
    if isinstance(optimizer, Ascent):
        return optimizer
    if isinstance(optimizer, str):
        optimizer = registered(optimizer)
    return optimizer.ascent()


def perturbation(g: sp.Matrix, optimizer, radius: sp.Expr = rho, W: sp.Matrix | None = None) -> sp.Matrix:
    """SAM's ascent step ε(g) for a whole gradient (entries g, joint norm over all of them) at the
    weights ``W`` (same shape; needed by a weighted ascent, :attr:`Ascent.weighted`): the optimizer's
    :class:`Ascent` (ℓ2 ``ρ g/‖g‖₂``, ℓ∞ ``ρ sign(g)``, unnormalised ``ρ g``, ASAM ``ρ w² g/‖w ⊙ g‖₂``, GD 0)."""
    asc = ascent_of(optimizer)
    if W is None:
        if asc.weighted:
            raise ValueError("a weighted ascent step (ASAM) needs the weights W beside the gradient")
        W = sp.zeros(g.rows, g.cols)
    norm = asc.norm(g, W)
    return sp.Matrix(g.rows, g.cols, lambda i, j: asc.at(g[i, j], W[i, j], norm, radius))


def perturbation_coordinate(optimizer, radius: sp.Expr = rho) -> tuple[sp.Symbol, sp.Symbol, sp.Expr]:
    """SAM's ascent step for one entry g of the gradient, given the joint norm S: the single
    definition of ε (THEORY.md, Setting; :class:`Ascent`); :func:`perturbation` and every
    compiled backend are built from it. ``optimizer``: a name, an optimizer object or an Ascent."""
    return ascent_of(optimizer).coordinate(radius)


def substitute(expr, W: sp.Matrix, W_new: sp.Matrix):
    """expr with every entry of W replaced by the matching entry of W_new, simultaneously."""
    return expr.subs({W[i]: W_new[i] for i in range(len(W))}, simultaneous=True)


def flow(W: sp.Matrix, Z: sp.Matrix, optimizer, loss: str = "logistic", radius: sp.Expr = rho) -> sp.Matrix:
    """dW/dt = −∇Lo(W + ε(W)) in real time (GD: ε = 0); for a per-example ascent (1-SAM)
    dW/dt = −(1/n) Σ_i ∇ℓ_i(W + ε(∇ℓ_i(W))), ℓ_i(W) = ℓ(<β(W), z_i>)."""
    asc = ascent_of(optimizer)
    if asc.per_example:
        n = Z.rows
        out = sp.zeros(W.rows, W.cols)
        for i in range(n):
            li = empirical_loss(W, Z[i, :], loss)  # ℓ_i (one row: no 1/n)
            gi = gradient(li, W)
            out -= substitute(gi, W, W + perturbation(gi, asc, radius, W))
        return out / n
    Lo = empirical_loss(W, Z, loss)
    g = gradient(Lo, W)
    eps = perturbation(g, asc, radius, W)
    return -substitute(g, W, W + eps)


def flow_named(W: sp.Matrix, Z: sp.Matrix, optimizer, loss: str = "logistic", radius: sp.Expr = rho,
               rescaled: bool = False) -> tuple[list[tuple[sp.Symbol, sp.Expr]], sp.Matrix]:
    """The explicit system of :func:`flow` (or, with ``rescaled``, of :func:`rescaled_flow`
    for one example), built entry by entry from the coordinate form of the gradient
    (``∂Lo/∂w_kj = G_j(w) Π_{m≠k} w_mj``, :func:`layer_gradient_coordinate`, with
    ``G = (1/n) Σ_i ℓ'(m_i) z_i`` from :func:`loss_gradient_factor`), ``ŵ = w + ε(g)``
    (:func:`perturbation_coordinate`) and ``dw_kj/dt = −G_j(ŵ) Π_{m≠k} ŵ_mj``, with its
    intermediate quantities named instead of expanded: returns (definitions, F), where each definition (symbol, expression) uses
    only W, Z, ρ and earlier symbols, and F (L×d) uses them too. Written out, the
    expanded field grows like (L d)² n per entry; this form grows like L d + n d.

    Names: ``G_j`` (∂Lo/∂β_j at w; rescaled: −z_j), ``S`` (the joint gradient norm, ℓ2
    only), ``what{k}_{j}`` (ŵ), ``Ghat_j`` (∂Lo/∂β_j at ŵ). A per-example ascent (1-SAM) names
    them per example i: ``G{i}_j`` (ℓ'(m_i) z_ij), ``what{i}_{k}_{j}``, ``Ghat{i}_j``."""
    asc = ascent_of(optimizer)
    if rescaled and not asc.scale_invariant:
        raise ValueError("the rescaled one-example flow needs an ascent step invariant under positive scaling of "
                         "the gradient (GD, ℓ2-SAM, ℓ∞-SAM): use real time")
    defs: list[tuple[sp.Symbol, sp.Expr]] = []

    def name(sym: str, expr: sp.Expr) -> sp.Symbol:
        x = sp.Symbol(sym, real=True)
        defs.append((x, expr))
        return x

    if asc.per_example and not rescaled:
        F = sp.zeros(W.rows, W.cols)
        for i in range(Z.rows):
            F += _named_field(W, Z[i, :], asc, loss, radius, name, tag=str(i + 1))
        return defs, F / Z.rows
    return defs, _named_field(W, Z, asc, loss, radius, name, tag="", rescaled=rescaled)


def _named_field(W, Z, asc: Ascent, loss, radius, name, *, tag: str, rescaled: bool = False) -> sp.Matrix:
    """−G(ŵ) Π_{m≠k} ŵ of :func:`flow_named` for the examples Z (one row per example, G with its 1/n),
    the intermediates named through ``name`` with ``tag`` after the letter."""
    L, d = W.rows, W.cols
    if rescaled:
        G_expr = [-Z[0, j] for j in range(d)]
        G = G_expr  # −z_j needs no name
    else:
        Gf = loss_gradient_factor(Z, W, loss)
        G = [name(f"G{tag}_{j + 1}", Gf[j]) for j in range(d)]
    P = product_of_others(W)
    g = sp.Matrix(L, d, lambda k, j: G[j] * P[k, j])
    S = name(f"S{tag}", asc.norm(g, W)) if asc.uses_norm else grad_norm
    if asc.trivial:
        W_hat = W
    else:
        sep = "_" if tag else ""
        W_hat = sp.Matrix(L, d, lambda k, j: name(f"what{tag}{sep}{k + 1}_{j + 1}",
                                                  W[k, j] + asc.at(g[k, j], W[k, j], S, radius)))
    if rescaled:
        G_hat = G_expr
    else:
        Gh = loss_gradient_factor(Z, W_hat, loss)
        G_hat = [name(f"Ghat{tag}_{j + 1}", Gh[j]) for j in range(d)]
    P_hat = product_of_others(W_hat)
    return sp.Matrix(L, d, lambda k, j: -G_hat[j] * P_hat[k, j])


def expand_named(defs: list[tuple[sp.Symbol, sp.Expr]], F: sp.Matrix) -> sp.Matrix:
    """F with the named quantities of :func:`flow_named` substituted back (the field of
    :func:`flow` / :func:`rescaled_flow` written out)."""
    for x, e in reversed(defs):  # later definitions use earlier ones: replace the last first
        F = F.xreplace({x: e})
    return F


def rescaled_flow(W: sp.Matrix, z: sp.Matrix, optimizer, radius: sp.Expr = rho) -> sp.Matrix:
    """One example, rescaled time dτ = −ℓ'(m̂) dt (THEORY.md, Rescaled flows):
    ``dw_k/dτ = z ⊙ Π_{m≠k} ŵ_m``, ``ŵ = w + ε(g)``, ``g_k = −z ⊙ Π_{m≠k} w_m``. Exists for a
    scale-invariant ascent only (:attr:`Ascent.scale_invariant`)."""
    asc = ascent_of(optimizer)
    if not asc.scale_invariant:
        raise ValueError("the rescaled one-example flow needs an ascent step invariant under positive scaling of "
                         "the gradient (GD, ℓ2-SAM, ℓ∞-SAM): use real time")
    P = product_of_others(W)
    g = sp.Matrix(W.rows, W.cols, lambda k, j: -z[j] * P[k, j])
    W_hat = W + perturbation(g, asc, radius, W)
    P_hat = product_of_others(W_hat)
    return sp.Matrix(W.rows, W.cols, lambda k, j: z[j] * P_hat[k, j])


def balanced_layers(u: sp.Matrix, L: int) -> sp.Matrix:
    """The balanced point: every layer equal to the row u."""
    return sp.Matrix.vstack(*[u for _ in range(L)])


def balanced_rescaled_flow(u: sp.Matrix, z: sp.Matrix, L: int, optimizer: str, radius: sp.Expr = rho) -> sp.Matrix:
    """The rescaled flow restricted to balanced points, as an ``L×d`` matrix (one row per
    layer; the balanced reduction says the rows are equal)."""
    W = layer_symbols(L, u.cols, prefix="_w")
    F = rescaled_flow(W, z, optimizer, radius)
    return substitute(F, W, balanced_layers(u, L))


def layer_gradient_coordinate(L: int) -> tuple[sp.Symbol, tuple[sp.Symbol, ...], tuple[sp.Expr, ...]]:
    """Coordinate form of the gradient, valid for any n and d: with
    ``G_j = ∂Lo/∂β_j = (1/n) Σ_i ℓ'(m_i) z_ij``, ``∂Lo/∂w_{k,j} = G_j ∂β_j/∂w_{k,j}``.

    Returns (G, (w_1..w_L), (g_1..g_L)): symbols of one coordinate j and the L partials."""
    G = sp.Symbol("G", real=True)
    w = sp.symbols(f"w1:{L + 1}", real=True)
    beta = sp.Mul(*w)
    return G, w, tuple(G * sp.diff(beta, wk) for wk in w)


def loss_gradient_factor(Z: sp.Matrix, W: sp.Matrix, loss: str = "logistic") -> sp.Matrix:
    """``G = (1/n) Σ_i ℓ'(m_i) z_i`` (a ``1×d`` row): ∂Lo/∂β."""
    dell = loss_derivative(loss)
    m = margins(W, Z)
    return sp.Add(*[dell.subs(s, m[i]) * Z[i, :] for i in range(Z.rows)]) / Z.rows


def _positive_part(x: sp.Expr) -> sp.Expr:
    """max(x, 0) = (|x| + x)/2, as a Piecewise: its compiled forms give the limits at x = ±∞
    (0 and ∞), where (|x| + x)/2 is ∞ − ∞ = NaN in floating point."""
    return sp.Piecewise((x, x > 0), (0, True))


def loss_expr_stable(loss: str = "logistic") -> sp.Expr:
    """ℓ(s) rewritten so that no exp overflows in float64: logistic
    ``max(−s, 0) + log1p(e^{−|s|})`` (= log(1 + e^{−s}) for every real s; accurate for
    tiny losses too; the limits 0 and ∞ at s = ±∞). Equal to :func:`loss_expr`
    (tests/test_forms_traj.py)."""
    from sympy.codegen.cfunctions import log1p

    check_loss(loss)
    if loss == "logistic":
        return _positive_part(-s) + log1p(sp.exp(-sp.Abs(s)))
    return loss_expr(loss)


def loss_derivative_stable(loss: str = "logistic") -> sp.Expr:
    """ℓ'(s) without inf/inf or overflow: logistic ``−e^{−|s|}/(1 + e^{−|s|})`` for s > 0 and
    ``−1/(1 + e^{−|s|})`` for s ≤ 0 (= −1/(1 + e^{s}); sympy's derivative ``−e^{−s}/(1 + e^{−s})``
    is NaN in float64 for s < −709). Only e^{−|s|} is evaluated, so no branch overflows, and
    s = ±∞ give the limits −0 and −1. Equal to :func:`loss_derivative`."""
    check_loss(loss)
    if loss == "logistic":
        d = loss_derivative(loss)
        return sp.simplify(d * sp.exp(s) / sp.exp(s))
    return loss_derivative(loss)


#: where :func:`loss_log_stable` switches to its asymptote (ln ℓ(s) = −s for the logistic loss
#: to float64 precision there: the next term, −e^{−s}/2, is below 1e-300)
LOG_LOSS_ASYMPTOTE = 700


def loss_log_stable(loss: str = "logistic") -> sp.Expr:
    """ln ℓ(s) where ℓ(s) itself underflows (margins beyond ~745): logistic
    ``log(ℓ_stable(s))`` for s < 700 and ``−s`` beyond (exact in float64 there), exponential
    ``−s``. Equal to ``log(loss_expr)`` (tests/test_pixels.py, with mpmath)."""
    check_loss(loss)
    if loss == "logistic":
        # the log's argument is clamped at the switch: array backends evaluate both branches, and
        # ln ℓ(s) of an underflowed ℓ(s) (s ≳ 745) would divide by zero in the unused one
        clamped = sp.Piecewise((s, s < LOG_LOSS_ASYMPTOTE), (LOG_LOSS_ASYMPTOTE, True))
        return sp.Piecewise((sp.log(loss_expr_stable(loss).subs(s, clamped)), s < LOG_LOSS_ASYMPTOTE), (-s, True))
    return -s


def loss_log_derivative_stable(loss: str = "logistic") -> sp.Expr:
    """ln |ℓ'(s)| without underflow or overflow: logistic ``−(max(s, 0) + log1p(e^{−|s|}))``
    (= −log(1 + e^{s}); the limits 0 and −∞ at s = ±∞), exponential ``−s``. The weights of
    several examples in log space: they stay comparable when every ℓ'(m_i) underflows. Equal to
    ``log(−loss_derivative)``."""
    from sympy.codegen.cfunctions import log1p

    check_loss(loss)
    if loss == "logistic":
        return -(_positive_part(s) + log1p(sp.exp(-sp.Abs(s))))
    return -s


def loss_log_second_derivative_stable(loss: str = "logistic") -> sp.Expr:
    """ln ℓ''(s) without underflow or overflow: logistic ``−|s| − 2 log1p(e^{−|s|})``
    (ℓ'' = e^{s}/(1 + e^{s})², even in s), exponential ``−s``. Equal to
    ``log(diff(loss_expr, s, 2))`` (tests/test_sliding.py); the weights of dG/dt along a flow."""
    from sympy.codegen.cfunctions import log1p

    check_loss(loss)
    if loss == "logistic":
        a = sp.Abs(s)
        return -a - 2 * log1p(sp.exp(-a))
    return -s
