"""A flow as the symbolic layer derives it, for reading: :func:`derive` gives a
:class:`Derivation` (sympy expressions; :meth:`Derivation.as_dict` is what
``theorycheck derive --format json`` prints).

Derivation runs under a time budget (``max_seconds``): the explicit system is built and
printed one equation at a time, the budget is checked between equations, and a run that
spends it returns what it derived with ``complete = False`` and ``stopped_because``
naming the budget. Progress goes to stderr. Sizes that cannot fit are refused up front.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from dataclasses import dataclass, field

import sympy as sp

from theorycheck.errors import ArgumentError
from theorycheck.optimizers import get as get_optimizer
from theorycheck.optimizers.registry import default_for
from theorycheck.record import Keys
from theorycheck.strength import KEYS as STRENGTH_KEYS
from theorycheck.strength import not_decided, proved
from theorycheck.symbolic import closed_forms as cf
from theorycheck.symbolic import model as sy
from theorycheck.vocabulary import PARAMETRISATIONS, REGRESSION_PARAMETRISATIONS, check_combination

#: the largest explicit system (depth × dim equations) derive builds; the coordinate form
#: (no --dim) has no limit on the depth
MAX_EQUATIONS = 600


class _Named(sp.Symbol):
    """A placeholder for a written-out formula (a product over layers, a sum over
    coordinates): plain text in text/JSON output, real LaTeX in LaTeX output."""

    def __new__(cls, text: str, latex: str):
        obj = super().__new__(cls, text)
        obj._latex_text = latex
        return obj

    def _latex(self, printer) -> str:
        return self._latex_text


PROD_HAT = _Named("Π_{m≠k} ŵ_mj", r"\prod_{m \neq k} \hat{w}_{mj}")
PROD = _Named("Π_{m≠k} w_mj", r"\prod_{m \neq k} w_{mj}")
S_SQUARED = _Named("Σ_k Σ_j z_j² (Π_{m≠k} w_mj)²", r"\sum_{k} \sum_{j} z_{j}^{2} \left(\prod_{m \neq k} w_{mj}\right)^{2}")
G_HAT = _Named("G_j(ŵ)", r"G_{j}(\hat{w})")
G_DEF = _Named("(1/n) Σ_i ℓ'(<β(w), z_i>) z_ij", r"\frac{1}{n} \sum_{i} \ell'\left(\langle \beta(w), z_{i} \rangle\right) z_{ij}")


def _sum_kj(term: sp.Expr) -> sp.Expr:
    """Σ_{k=1}^{L} Σ_{j=1}^{d} term: S² of a weighted ascent (ASAM), its term from the ascent's own norm."""
    return sp.Sum(term, (sp.Symbol("k"), 1, sp.Symbol("L")), (sp.Symbol("j"), 1, sp.Symbol("d")))


class Clock:
    """The running wall clock of a derivation against its ``max_seconds`` (the one limit a derivation has),
    checked between equations, and its progress callback."""

    def __init__(self, max_seconds: float | None, progress=None):
        self.max_seconds = max_seconds
        self.start = time.monotonic()
        self.progress = progress

    def spent(self) -> bool:
        return self.max_seconds is not None and time.monotonic() - self.start > self.max_seconds

    def tick(self, done: int, total: int, what: str) -> None:
        if self.progress is not None:
            self.progress(done, total, what)


class OutOfTime(Exception):
    """The derivation's time budget ran out inside a sympy operation."""


#: seconds between repeated alarms once the budget has run out (see :func:`_deadline`)
REARM = 0.05


@contextlib.contextmanager
def _deadline(budget: Clock):
    """Interrupt a long sympy operation when the budget runs out (SIGALRM, main thread
    only; elsewhere the budget is checked between equations). An outer timer is re-armed. The
    alarm repeats every :data:`REARM` s until the block is left: sympy catches exceptions in some
    places, and one swallowed alarm must not let the operation run on for minutes."""
    if (budget.max_seconds is None or threading.current_thread() is not threading.main_thread()
            or not hasattr(signal, "setitimer")):
        yield
        return
    left = budget.max_seconds - (time.monotonic() - budget.start)
    if left <= 0:
        raise OutOfTime

    def on_alarm(signum, frame):
        raise OutOfTime

    t0 = time.monotonic()
    old_handler = signal.signal(signal.SIGALRM, on_alarm)
    old_delay, old_interval = signal.setitimer(signal.ITIMER_REAL, left, REARM)
    if old_delay and old_delay < left:  # an outer timer fires first: keep it
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old_handler)
        signal.setitimer(signal.ITIMER_REAL, old_delay, old_interval)
        yield
        return
    try:
        yield
    finally:
        _disarm(old_handler)
        if old_delay:
            signal.setitimer(signal.ITIMER_REAL, max(old_delay - (time.monotonic() - t0), 1e-3), old_interval)


def _disarm(old_handler) -> None:
    """Stop the repeating alarm and restore the handler. A repeat can fire between the block's end
    and the disarming itself (its OutOfTime would leave the timer running past the block, to fire
    in whatever runs next): retry until both are done."""
    while True:
        try:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old_handler)
            return
        except OutOfTime:
            continue


def _fill(out: dict, depth: int, optimizer, balanced: bool, dim: int | None, loss: str, examples: int) -> None:
    """Derive into ``out`` (entries appear as they are derived: a budget stop keeps them)."""
    opt = get_optimizer(optimizer)
    if balanced:
        if examples != 1:
            raise ArgumentError("balanced=True applies to the one-example rescaled flow: drop examples", "balanced",
                                "examples")
        out["time"] = "rescaled"
        out["equations"] = {
            "du_j/dtau": cf.balanced_field(depth, optimizer),
            "uhat_j": cf.balanced_perturbed_point(depth, optimizer),
        }
        if opt.normalised:
            out["equations"]["N**2"] = sp.Sum(cf.balanced_norm_summand(depth, optimizer).subs(
                {cf.z_j: sp.Symbol("z_k"), cf.u_j: sp.Symbol("u_k")}), (sp.Symbol("k"), 1, sp.Symbol("d")))
        if opt.discontinuous:
            out["equations"]["du_j/dtau (z_j > 0, u_j > 0)"] = cf.balanced_field_linf_positive(depth)
        if dim:
            u = sp.Matrix(1, dim, lambda _, j: sp.Symbol(f"u{j + 1}", real=True))
            z = sy.data_symbols(1, dim)
            F = sy.balanced_rescaled_flow(u, z, depth, optimizer)
            out["system"] = {f"du{j + 1}/dtau": F[0, j] for j in range(dim)}
        return
    z_j, w_kj, G_j = sp.Symbol("z_j", real=True), sp.Symbol("w_kj", real=True), sp.Symbol("G_j", real=True)
    asc = sy.ascent_of(optimizer)
    S_sym = sy.grad_norm
    if examples == 1:
        out["time"] = "rescaled"
        out["equations"] = {
            "dw_kj/dtau": z_j * PROD_HAT,
            "what_kj": w_kj + asc.at(-z_j * PROD, w_kj, S_sym),
            "S**2": S_SQUARED if not asc.weighted else _sum_kj(asc.norm_term(-z_j * PROD, w_kj)),
        }
    else:
        out["time"] = "real"
        out["equations"] = {
            "dw_kj/dt": -G_HAT * PROD_HAT,
            "G_j(w)": G_DEF,
            "l'(s)": sy.loss_derivative(loss),
            "what_kj": w_kj + asc.at(G_j * PROD, w_kj, S_sym),
        }
        if asc.weighted:
            out["equations"]["S**2"] = _sum_kj(asc.norm_term(G_j * PROD, w_kj))
    if dim:
        W = sy.layer_symbols(depth, dim)
        Z = sy.data_symbols(examples, dim)
        defs, F = sy.flow_named(W, Z, optimizer, loss, rescaled=examples == 1)
        name = "dw{k}_{j}/dtau" if examples == 1 else "dw{k}_{j}/dt"
        out["definitions"] = {str(x): e for x, e in defs}
        out["system"] = {name.format(k=k + 1, j=j + 1): F[k, j] for k in range(depth) for j in range(dim)}


def derivation(depth: int, optimizer: str, *, balanced: bool, dim: int | None = None,
               loss: str = "logistic", examples: int = 1, max_seconds: float | None = 60.0,
               progress=None) -> dict:
    """The flow as sympy expressions: coordinate form (any d) and, with ``dim``, the
    explicit system for that d. Returns a dict of named expressions and a description;
    ``complete`` is False when the budget ran out (``stopped_because`` names it) and
    ``system`` then holds the equations derived so far. ``progress(done, total, what)``."""
    _combination("product", loss, optimizer, depth if isinstance(depth, int) and not isinstance(depth, bool) else 1)
    if isinstance(depth, bool) or depth < 1:
        raise ArgumentError(f"depth={depth!r}: L must be ≥ 1", "depth")
    if max_seconds is not None and not max_seconds > 0:
        raise ArgumentError(f"max_seconds={max_seconds!r}: give a time budget > 0", "max_seconds")
    if dim is not None and not 1 <= dim <= 6:
        raise ArgumentError(f"dim={dim!r}: choose 1..6 (the explicit system grows quickly)", "dim")
    if examples < 1 or examples > 3:
        raise ArgumentError(f"examples={examples!r}: choose 1..3", "examples")
    n_eq = (dim or 0) * (1 if balanced else depth)
    if n_eq > MAX_EQUATIONS:
        raise ArgumentError(f"dim={dim} with depth={depth}: {n_eq} equations exceed the limit of "
                            f"{MAX_EQUATIONS} for the explicit system; drop dim for the coordinate form", "dim", "depth")
    budget = Clock(max_seconds, progress)
    out: dict[str, object] = {"depth": depth, "optimizer": optimizer, "balanced": balanced,
                              "complete": True, "stopped_because": None}
    try:
        with _deadline(budget):
            _fill(out, depth, optimizer, balanced, dim, loss, examples)
    except OutOfTime:
        out["complete"] = False
        out["stopped_because"] = (f"max_seconds: the time budget of {budget.max_seconds:g} s ran out while "
                                  "deriving" + (" the explicit system" if dim else ""))
        out.setdefault("equations", {})
        out.pop("system", None)
        out.pop("definitions", None)
    out["_budget"] = budget
    return out


def render(res: dict, fmt: str) -> dict:
    """Text of every equation (``fmt`` "text" | "latex" | "json"), under the derivation's
    budget: when it runs out, the rest is left out, ``complete`` becomes False and
    ``stopped_because`` names the budget."""
    budget: Clock | None = res.pop("_budget", None)
    parts = ("equations", "definitions", "system")
    items = [(part, k, v) for part in parts for k, v in res.get(part, {}).items()]
    out = {k: v for k, v in res.items() if k not in parts}
    for part in parts:
        if part in res:
            out[part] = {}
    if fmt == "json":
        out["latex"] = {}
    for i, (part, k, v) in enumerate(items):
        if budget is not None and budget.spent():
            out["complete"] = False
            out["stopped_because"] = (f"max_seconds: the time budget of {budget.max_seconds:g} s ran out after "
                                      f"{i} of {len(items)} equations")
            break
        try:
            with _deadline(budget) if budget is not None else contextlib.nullcontext():
                text = _fmt(v, fmt)
                tex = sp.latex(v) if fmt == "json" and part == "equations" else None
        except OutOfTime:
            out["complete"] = False
            out["stopped_because"] = (f"max_seconds: the time budget of {budget.max_seconds:g} s ran out after "
                                      f"{i} of {len(items)} equations")
            break
        out[part][k] = text
        if tex is not None:
            out["latex"][k] = tex
        if budget is not None:
            budget.tick(i + 1, len(items), "equations printed")
    return out


def _fmt(expr, fmt: str) -> str:
    if fmt == "latex":
        return sp.latex(expr)
    text = sp.sstr(expr)
    if fmt == "json" or len(text) > 400:  # 2-D pretty printing only where it stays readable
        return text
    pretty = sp.pretty(expr, use_unicode=True)
    return pretty if "\n" in pretty else text


@dataclass
class Derivation:
    """``equations``: name -> sympy expression (coordinate form, any d); ``definitions``: the
    named intermediates of the explicit system (G_j, S, ŵ, Ĝ_j) and ``system`` the explicit
    system for ``dim`` in terms of them (empty without ``dim``); ``time``: "rescaled" (one
    example, dτ = −ℓ′(m̂) dt) or "real"; ``complete`` False when the time budget ran out
    (``stopped_because`` names it). ``as_dict()``: what ``theorycheck derive --format json`` prints
    (docs/commands/derive.md)."""

    KEYS = Keys("derive", "depth", "optimizer", "balanced", "time", "equations", "latex", "definitions", "system",
                "complete", "stopped_because", strength=STRENGTH_KEYS)

    depth: int
    optimizer: str
    balanced: bool
    time: str
    equations: dict
    system: dict
    definitions: dict
    complete: bool
    stopped_because: str | None
    dim: int | None = None
    loss: str = "logistic"
    examples: int = 1
    _raw: dict = field(default_factory=dict, repr=False)
    _rendered: dict = field(default_factory=dict, repr=False)

    def render(self, fmt: str = "json") -> dict:
        """Every equation as text (``fmt`` "text" | "latex" | "json"), under the derivation's
        budget (:func:`render`); computed once per format."""
        if fmt not in self._rendered:
            self._rendered[fmt] = render(dict(self._raw), fmt)
        return self._rendered[fmt]

    def as_dict(self) -> dict:
        """The rendered derivation and its ``strength``: proved (sympy's exact algebra) when complete, else not
        decided (the budget that ran out)."""
        out = dict(self.render("json"))
        out["strength"] = (proved() if out.get("complete", True)
                           else not_decided(out.get("stopped_because") or "the derivation's budget ran out")).as_dict()
        return out


@dataclass(frozen=True)
class RegressionDerivation:
    """The flow of a regression parametrisation (pm: β = w₊^D − w₋^D; uv: β = u ⊙ v) with the squared
    loss and an optimizer (``equations``: name → text, from :mod:`theorycheck.symbolic.regression`)."""

    KEYS = Keys("derive.regression", "depth", "param", "loss", "optimizer", "equations", strength=STRENGTH_KEYS)

    depth: int
    equations: dict
    param: str = "pm"
    optimizer: str = ""

    def as_dict(self) -> dict:
        """Keys: depth, param, loss ("squared"), optimizer, equations, strength (proved: sympy's exact algebra)."""
        return {"depth": self.depth, "param": self.param, "loss": "squared", "optimizer": self.optimizer,
                "equations": dict(self.equations), "strength": proved().as_dict()}


#: the former name of :class:`RegressionDerivation` (gradient flow on pm)
PmDerivation = RegressionDerivation


def _combination(param: str, loss: str, optimizer, depth: int):
    """The optimizer object when derive prints this combination (the engine integrates it), else the
    one-line refusal (a SettingError naming the arguments)."""
    if param not in PARAMETRISATIONS:
        raise ArgumentError(f"param={param!r}: choose one of {', '.join(PARAMETRISATIONS)}", "param")
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise ArgumentError(f"depth={depth!r}: L must be ≥ 1", "depth")
    # an unknown name or a combination that is not integrated: the registry's one-line SettingError, whose
    # ``arguments`` the CLI writes as its flags
    return check_combination(param, loss, default_for(param, loss, depth) if optimizer is None else optimizer, depth)


def _regression(depth: int, param: str, opt) -> RegressionDerivation:
    """The chart flow of (param, depth, opt); for gradient descent on pm also the solved flow, the metric
    and the mirror potential (:func:`theorycheck.symbolic.regression.derivation`)."""
    from theorycheck.symbolic import regression as R

    eq = R.regression_derivation(param, depth, opt.ascent(), opt.title)
    if param == "pm" and not opt.perturbs:
        eq = {**R.derivation(depth), **eq}
    return RegressionDerivation(depth, eq, param, opt.name)


def derive(depth: int = 2, optimizer: str | None = None, *, balanced: bool = False, dim: int | None = None,
           loss: str = "logistic", examples: int = 1, param: str = "product", max_seconds: float | None = 60.0,
           progress: bool | None = None) -> Derivation | RegressionDerivation:
    """The flow of ``optimizer`` (default: the registry's, or GD for regression) at depth L as derived
    by sympy, for every combination the engine integrates (others: a one-line ArgumentError saying
    why, and what is integrated there). ``param="product"``: one example in rescaled time
    (``examples`` 2–3: real time, loss ``loss``), ``balanced`` for w_k = u, and with ``dim`` (1..6) the
    explicit system for that d, within ``max_seconds`` (past it the result is marked incomplete).
    ``param="pm"`` or ``"uv"`` (``loss="squared"``): the regression flow in its log chart
    (:class:`RegressionDerivation`). ``progress``: report on stderr (True), never (False) or when
    stderr is a terminal (None)."""
    from theorycheck.progress import count_reporter

    progress = count_reporter(progress)
    opt = _combination(param, loss, optimizer, depth)
    if param in REGRESSION_PARAMETRISATIONS:
        return _regression(depth, param, opt)
    raw = derivation(depth, opt.name, balanced=balanced, dim=dim, loss=loss, examples=examples,
                     max_seconds=max_seconds, progress=progress)
    return Derivation(depth=depth, optimizer=opt.name, balanced=balanced, time=raw.get("time", ""),
                      equations=dict(raw.get("equations", {})), system=dict(raw.get("system", {})),
                      definitions=dict(raw.get("definitions", {})), complete=raw["complete"],
                      stopped_because=raw["stopped_because"], dim=dim, loss=loss, examples=examples, _raw=raw)
