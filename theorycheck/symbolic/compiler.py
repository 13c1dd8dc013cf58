"""The compiler of the symbolic layer: sympy expressions into numerical functions (numpy, mpmath, torch,
and Arb balls and power series for validated integration). The catalogue of compiled forms is
:mod:`theorycheck.symbolic.forms`; nothing outside ``symbolic/`` calls lambdify.

``sympy.lambdify`` is always called with an explicit ``modules=`` and ``cse=True``, cached, so that a
constant can never differ between the symbolic statement and the code that integrates it. Depth L is
substituted as an integer before compiling (``u**(L-1)`` with a float exponent is NaN for u < 0).

mpmath functions work on ``mpf`` scalars at the caller's working precision (use ``mpmath.workdps``; this
module never changes the global precision).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

BACKENDS: dict[str, str] = {"numpy": "numpy", "mpmath": "mpmath", "torch": "torch"}


def _modules(backend: str) -> list[str]:
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    return [BACKENDS[backend]]


def _numeric_functions_as_floats(expr):
    """torch's functions take tensors only: a function of a number (``log(2)``) becomes its
    float64 value, so that the printed code never calls ``torch.log(2)``."""
    if isinstance(expr, tuple):
        return tuple(_numeric_functions_as_floats(e) for e in expr)
    if not isinstance(expr, sp.Basic):
        return expr
    return expr.replace(lambda e: isinstance(e, sp.Function) and e.is_number,
                        lambda e: sp.Float(e.evalf(17), 17))


@lru_cache(maxsize=1)
def _torch_printer():
    """sympy's TorchPrinter (lambdify's settings for torch) that also prints ``log1p``
    (used by the overflow-free logistic loss) as ``torch.log1p``."""
    from sympy.printing.pytorch import TorchPrinter

    class _Printer(TorchPrinter):
        def _print_log1p(self, expr):
            return f"{self._module_format('torch.log1p')}({self._print(expr.args[0])})"

    return _Printer({"fully_qualified_modules": False, "inline": True, "allow_unknown_functions": True,
                     "user_functions": {}})


@lru_cache(maxsize=1)
def _numpy_printer():
    """sympy's NumPyPrinter (lambdify's settings for numpy) that prints a Piecewise with a
    final ``True`` branch as nested ``where`` (the same values as ``select``, a fraction of
    its per-call cost: the batched engine evaluates the smooth clock at every stage)."""
    from sympy.printing.numpy import NumPyPrinter

    class _Printer(NumPyPrinter):
        def _print_Piecewise(self, expr):
            if expr.args[-1].cond != sp.true:
                return super()._print_Piecewise(expr)
            out = self._print(expr.args[-1].expr)
            for e, c in reversed(expr.args[:-1]):
                out = f"{self._module_format('numpy.where')}({self._print(c)}, {self._print(e)}, {out})"
            return out

    return _Printer({"fully_qualified_modules": False, "inline": True, "allow_unknown_functions": True,
                     "user_functions": {}})


@lru_cache(maxsize=512)
def _lambdify_cached(args: tuple, expr, backend: str) -> Callable:
    if backend == "torch":
        expr = _numeric_functions_as_floats(expr)
        return sp.lambdify(args, expr, modules=_modules(backend), cse=True, printer=_torch_printer())
    if backend == "numpy":
        return sp.lambdify(args, expr, modules=_modules(backend), cse=True, printer=_numpy_printer())
    return sp.lambdify(args, expr, modules=_modules(backend), cse=True)


def lambdify(args, expr, backend: str = "numpy") -> Callable:
    """``sympy.lambdify(args, expr, modules=[backend], cse=True)``, cached by (args, expr, backend)."""
    args = tuple(args)
    if isinstance(expr, (list, tuple)):
        expr = tuple(expr)
    return _lambdify_cached(args, expr, backend)


def numpy_system(args, exprs) -> Callable:
    """A system of sympy expressions compiled once for float64 (``f(*args) -> tuple``), for the solvers and
    predictors that integrate a derived system in floating point beside its ball-arithmetic twin."""
    return lambdify(tuple(args), tuple(exprs), "numpy")


def residual_functions(args, exprs) -> list[Callable]:
    """mpmath functions of proof steps' differences lhs − rhs, evaluated at random points by
    :func:`theorycheck.symbolic.theorem.numeric_residual` (plain lambdify, no cse and no cache: each
    expression evaluated as the proof states it)."""
    return [sp.lambdify(tuple(args), e, modules="mpmath") for e in exprs]


# ---------------------------------------------------------------- ball arithmetic (python-flint's Arb)
# An expression is compiled into Python source that calls only the methods common to ``arb`` and
# ``arb_series`` (+, −, ×, ÷, exp, log, sqrt, rsqrt, integer powers), so one compiled function
# evaluates a field at a ball (an enclosure of its value for every point of the balls) and on
# truncated power series (its Taylor coefficients). Constants are built at call time, at the caller's
# precision: a rational p/q is the ball arb(p)/q, a sympy Float its exact binary value; nothing is
# rounded at compile time. Everything that depends on the parameters only is computed once per
# binding (:meth:`ArbFunction.bind`), and a series is always the left operand of a mixed product
# (python-flint's mixed-type operators are several times slower the other way round).
class _ArbPrinter:
    """sympy expression → Python source; ``scalars`` are the symbols bound once (parameters)."""

    def __init__(self, scalars: set, series: bool):
        self.scalars = scalars
        self.series = series
        self.hoisted: list[tuple[str, str]] = []  # (name, code) computed once per binding
        self.cache: dict = {}
        self.series_consts: dict[str, str] = {}

    def is_scalar(self, e) -> bool:
        return e.free_symbols <= self.scalars

    def hoist(self, e) -> str:
        """A name for the scalar expression e, computed once per binding."""
        key = e
        if key in self.cache:
            return self.cache[key]
        code = self._scalar(e)
        name = f"_h{len(self.hoisted)}"
        self.hoisted.append((name, code))
        self.cache[key] = name
        return name

    def as_series_const(self, name: str) -> str:
        """A length-1 series of the hoisted scalar ``name`` (series + series is the fast addition)."""
        if not self.series:
            return name
        out = self.series_consts.get(name)
        if out is None:
            out = self.series_consts[name] = f"{name}s"
        return out

    def _scalar(self, e) -> str:
        """Source for a scalar (parameter-only) expression, using earlier hoisted names."""
        if isinstance(e, sp.Symbol):
            return self.cache.get(e, e.name)
        if isinstance(e, sp.Integer):
            return f"_A({int(e)})"
        if isinstance(e, sp.Rational):
            return f"(_A({int(e.p)}) / _A({int(e.q)}))"
        if isinstance(e, sp.Float):
            import mpmath

            man, exp = mpmath.mpf(e._mpf_).man_exp
            return f"_ldexp({int(man)}, {int(exp)})"
        if e is sp.pi:
            return "_A.pi()"
        if e is sp.E:
            return "_A(1).exp()"
        return self.node(e, scalar=True)

    def __call__(self, e) -> str:
        if self.is_scalar(e):
            return self.hoist(e)
        return self.node(e, scalar=False)

    def sub(self, e, scalar: bool) -> str:
        if scalar:
            return self._scalar(e)
        return self.hoist(e) if self.is_scalar(e) else self.node(e, scalar=False)

    def node(self, e, scalar: bool) -> str:  # noqa: C901 - one branch per node type
        if isinstance(e, sp.Symbol):
            return e.name
        if scalar and isinstance(e, sp.Add):
            return "(" + " + ".join(self._scalar(a) for a in e.args) + ")"
        if scalar and isinstance(e, sp.Mul):
            num = [self._scalar(a) for a in e.args if not (isinstance(a, sp.Pow) and a.exp.is_Integer and a.exp < 0)]
            den = [self._scalar(sp.Pow(a.base, -a.exp)) for a in e.args
                   if isinstance(a, sp.Pow) and a.exp.is_Integer and a.exp < 0]
            out = " * ".join(num) if num else "_A(1)"
            return f"(({out}) / ({' * '.join(den)}))" if den else f"({out})"
        if isinstance(e, sp.Add):
            terms = [a for a in e.args if not self.is_scalar(a)]
            consts = [a for a in e.args if self.is_scalar(a)]
            parts = [self.sub(a, scalar) for a in terms]
            if consts:
                c = self.hoist(sp.Add(*consts))
                parts.append(c if scalar else self.as_series_const(c))
            return "(" + " + ".join(parts) + ")"
        if isinstance(e, sp.Mul):
            num, den = [], []
            consts = [a for a in e.args if self.is_scalar(a)]
            for a in e.args:
                if self.is_scalar(a):
                    continue
                if isinstance(a, sp.Pow) and a.exp.is_Integer and a.exp < 0:
                    den.append(self.sub(a.base, scalar) if a.exp == -1 else self.sub(sp.Pow(a.base, -a.exp), scalar))
                else:
                    num.append(self.sub(a, scalar))
            c = self.hoist(sp.Mul(*consts)) if consts else None
            if not num:
                out = f"({c} / ({' * '.join(den)}))" if c else f"(_A(1) / ({' * '.join(den)}))"
                return out
            out = " * ".join(num)
            if den:
                out = f"({out}) / ({' * '.join(den)})"
            if c:
                out = f"({out}) * {c}"
            return "(" + out + ")"
        if isinstance(e, sp.Pow):
            b, x = e.base, e.exp
            if x.is_Integer:
                n = int(x)
                if n == 0:
                    return "_A(1)"
                if n > 0:
                    return f"_ipow({self.sub(b, scalar)}, {n})"
                return f"(_A(1) / _ipow({self.sub(b, scalar)}, {-n}))"
            if x == sp.Rational(1, 2):
                return f"({self.sub(b, scalar)}).sqrt()"
            if x == sp.Rational(-1, 2):
                return f"({self.sub(b, scalar)}).rsqrt()"
            if x.is_Rational and x.q == 2:
                n = int(x.p)
                root = f"({self.sub(b, scalar)}).sqrt()" if n > 0 else f"({self.sub(b, scalar)}).rsqrt()"
                return f"_ipow({root}, {abs(n)})"
            lg = f"({self.sub(b, scalar)}).log()"
            if self.is_scalar(x):
                return f"({lg} * {self.hoist(x)}).exp()"
            return f"({lg} * {self.sub(x, scalar)}).exp()"
        if isinstance(e, sp.exp):
            return f"({self.sub(e.args[0], scalar)}).exp()"
        if isinstance(e, sp.log) and len(e.args) == 1:
            return f"({self.sub(e.args[0], scalar)}).log()"
        if isinstance(e, (sp.Integer, sp.Rational, sp.Float)) or e in (sp.pi, sp.E):
            return self._scalar(e)
        raise TypeError(f"no ball-arithmetic form for {type(e).__name__}: {e}")


def _ipow(x, n: int):
    """x**n for an integer n ≥ 1 by repeated squaring (arb and arb_series alike)."""
    out = None
    while n:
        if n & 1:
            out = x if out is None else out * x
        n >>= 1
        if n:
            x = x * x
    return out


def _ldexp(man: int, exp: int):
    from flint import arb

    return arb(man) * arb(2) ** exp if exp < 0 else arb(man * 2**exp)


#: python-flint's series carry their own truncation O(x^n): a constant series made at the default length
#: would silently truncate every sum it enters, so constants are made with this length
_SERIES_CONST_CAP = 1 << 12


class ArbFunction:
    """A compiled expression list for ball arithmetic (see :func:`arb_function`). ``f(*args)`` evaluates at
    balls (all arguments ``flint.arb``) or on series (the variables ``arb_series``, the parameters ``arb``);
    ``f.bind(*params)`` returns ``g(*variables)`` with the parameter-only parts computed once (``series=True``:
    for series arguments). ``source`` is the generated code."""

    def __init__(self, variables: tuple, params: tuple, exprs: tuple):
        from flint import arb, arb_series

        self.variables, self.params, self.exprs = variables, params, exprs
        # symbols by safe Python names (a sympy name such as "z_(d)" is not an identifier)
        safe = {s_: sp.Symbol(f"_a{i}", **s_.assumptions0) for i, s_ in enumerate((*variables, *params))}
        exprs = tuple(e.xreplace(safe) for e in exprs)
        variables = tuple(safe[v] for v in variables)
        params = tuple(safe[p] for p in params)
        scal = set(params)
        subs, reduced = sp.cse(list(exprs), symbols=sp.numbered_symbols("_c"), optimizations="basic")
        # a CSE symbol that depends on parameters only is itself a scalar
        self.sources = {}
        self._fns = {}
        for series in (False, True):
            pr = _ArbPrinter(set(scal), series)
            lines = []
            for sym, val in subs:
                if val.free_symbols <= pr.scalars:
                    pr.scalars.add(sym)
                    pr.cache[sym] = pr.hoist(val)
                    continue
                lines.append(f"    {sym.name} = {pr(val)}")
            outs = [pr(r) for r in reduced]
            # hoisted names used as CSE aliases
            alias = [f"    {sym.name} = {pr.cache[sym]}" for sym, _ in subs if sym in pr.cache]
            prep = ([f"def _prep({', '.join(p.name for p in params)}):"] +
                    [f"    {n} = {c}" for n, c in pr.hoisted] +
                    [f"    {n}s = _S([{n}])" for n in pr.series_consts] +
                    [f"    return ({', '.join([n for n, _ in pr.hoisted] + list(pr.series_consts.values()))}"
                     f"{',' if (pr.hoisted or pr.series_consts) else ''})"])
            hnames = [n for n, _ in pr.hoisted] + list(pr.series_consts.values())
            body = ([f"def _f({', '.join([v.name for v in variables] + ['_H'])}):",
                     f"    ({', '.join(hnames)}{',' if hnames else ''}) = _H" if hnames else "    pass"]
                    + alias + lines + [f"    return ({', '.join(outs)}{',' if len(outs) == 1 else ''})"])
            src = "\n".join(prep) + "\n\n" + "\n".join(body) + "\n"
            ns = {"_A": arb, "_S": arb_series, "_ipow": _ipow, "_ldexp": _ldexp}
            exec(compile(src, "<theorycheck.symbolic.forms.arb>", "exec"), ns)  # noqa: S102 - printed from sympy
            self._fns[series] = (ns["_prep"], ns["_f"])
            self.sources[series] = src
        self.source = self.sources[False]
        self._nv = len(variables)

    def bind(self, *params, series: bool = False):
        """``g(*variables)`` with these parameter values (arb) fixed."""
        prep, f = self._fns[bool(series)]
        from flint import ctx

        old = ctx.cap
        ctx.cap = _SERIES_CONST_CAP  # a constant series is exact: O(x^n) only past any length used
        try:
            H = prep(*params)
        finally:
            ctx.cap = old
        return lambda *v: f(*v, H)

    def __call__(self, *args):
        from flint import arb_series

        v, p = args[: self._nv], args[self._nv:]
        series = any(isinstance(a, arb_series) for a in v)
        return self.bind(*p, series=series)(*v)


@lru_cache(maxsize=256)
def _arb_compiled(variables: tuple, params: tuple, exprs: tuple) -> ArbFunction:
    return ArbFunction(variables, params, exprs)


def arb_function(args, exprs, params=()) -> ArbFunction:
    """Compile ``exprs`` (sympy expressions in the symbols ``args`` followed by ``params``) for ball
    arithmetic: ``f(*args, *params) -> tuple`` of one value per expression, each a ``flint.arb`` (a ball
    enclosing the exact value for every point of the argument balls) or an ``arb_series`` (the Taylor
    coefficients, truncated at ``flint.ctx.cap``) when some argument is a series (parameters are always arb).
    Constants are made at call time, at the caller's ``flint.ctx.prec``; ``f.bind(*params)`` fixes the
    parameters once. The source is ``f.source``."""
    return _arb_compiled(tuple(args), tuple(params), tuple(sp.sympify(e) for e in exprs))


class _LazyArbFunction:
    """An :class:`ArbFunction` compiled on first use (``bind``, a call, ``source``): a Jacobian that a run never
    asks for costs no sympy differentiation."""

    def __init__(self, build: Callable[[], ArbFunction]):
        self._build = build
        self._fn: ArbFunction | None = None

    def get(self) -> ArbFunction:
        if self._fn is None:
            self._fn = self._build()
        return self._fn

    def bind(self, *params, series: bool = False):
        return self.get().bind(*params, series=series)

    def __call__(self, *args):
        return self.get()(*args)

    @property
    def source(self) -> str:
        return self.get().source


@dataclass(frozen=True)
class ArbSystem:
    """An ODE dx/dt = f(t, x; p) compiled for ball arithmetic (see :func:`arb_system`):
    ``field(t, *x, *p)`` → d values, ``jacobian(t, *x, *p)`` → the d × (d + m) entries
    ∂f_i/∂(x, p)_j row by row, ``field_and_state_jacobian(t, *x, *p)`` → the d values of f followed by the
    d × d entries ∂f_i/∂x_j row by row (one compiled function, so the two share their subexpressions; all three
    with ``bind``; the Jacobians are compiled on first use); ``identity`` names the sympy system (a sha256 of its
    text), ``text`` the fields as sympy strings."""

    name: str
    time: sp.Symbol
    states: tuple
    params: tuple
    exprs: tuple
    field: ArbFunction
    jacobian: _LazyArbFunction
    identity: str
    text: tuple
    field_and_state_jacobian: _LazyArbFunction | None = None


@lru_cache(maxsize=64)
def _arb_system_cached(name: str, time, states: tuple, params: tuple, exprs: tuple) -> ArbSystem:
    import hashlib

    args = (time, *states)
    text = tuple(sp.srepr(e) for e in exprs)
    ident = hashlib.sha256(repr((name, str(time), [str(s) for s in states], [str(p) for p in params],
                                 text)).encode()).hexdigest()

    def jacobian():
        return arb_function(args, [sp.diff(f, v) for f in exprs for v in (*states, *params)], params)

    def field_and_state_jacobian():
        return arb_function(args, [*exprs, *[sp.diff(f, v) for f in exprs for v in states]], params)

    return ArbSystem(name, time, states, params, exprs, arb_function(args, exprs, params),
                     _LazyArbFunction(jacobian), ident, tuple(sp.sstr(e) for e in exprs),
                     _LazyArbFunction(field_and_state_jacobian))


def arb_system(name: str, time, states, params, exprs) -> ArbSystem:
    """Compile the vector field ``exprs`` (sympy, one per state symbol) of dx/d``time`` with parameter
    symbols ``params`` for ball arithmetic, with its Jacobian in (states, params) (sympy.diff)."""
    exprs = tuple(sp.sympify(e) for e in exprs)
    if len(exprs) != len(states):
        raise ValueError(f"{len(exprs)} field entries for {len(states)} states")
    return _arb_system_cached(str(name), time, tuple(states), tuple(params), exprs)
