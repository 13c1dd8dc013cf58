"""Taylor coefficients of the solution of dx/dt = f(t, x) through (t0, x0), by series arithmetic.

Picard iteration on truncated power series, x ← x0 + ∫ f(t0 + s, x(s)) ds: after n sweeps the
coefficients of s^0 … s^n are exact (each sweep fixes one more), so the series length (python-flint's
global ``ctx.cap``) is set to n + 1 for sweep n and restored after. With ball inputs (t0, x0 balls)
every coefficient is a ball enclosing the coefficient for every point of the inputs: the (K+1)-th
coefficient over the a-priori box is the Taylor remainder's factor.
"""

from __future__ import annotations

from flint import arb, arb_series

from theorycheck.solvers.validated.balls import arb_context


def coefficient(s: arb_series, k: int) -> arb:
    """The k-th coefficient of a series (0 beyond its stored length)."""
    c = s.coeffs()
    return c[k] if k < len(c) else arb(0)


def series_solution(field, t0: arb, x0: list, K: int) -> list:
    """The solution's Taylor series through (t0, x0) to order K (length K + 1), one per state;
    ``field(T, *X)`` evaluates the (parameter-bound) field on series."""
    d = len(x0)
    with arb_context(cap=1):
        X = [arb_series([x]) for x in x0]
    for n in range(1, K + 1):
        with arb_context(cap=n + 1):
            T = arb_series([t0, 1])
            F = field(T, *X)
            X = [F[i].integral() + x0[i] for i in range(d)]
    for x in X:
        if x.prec < K + 1:  # a series truncated below the order asked for: its coefficients would be wrong
            raise ArithmeticError(f"a Taylor series was truncated at length {x.prec} < {K + 1} (series cap)")
    return X


def taylor_coefficients(field, t0: arb, x0: list, K: int) -> list:
    """coef[k][i]: the k-th Taylor coefficient (x_i^{(k)}/k!) of the solution through (t0, x0), k = 0 … K."""
    X = series_solution(field, t0, x0, K)
    return [[coefficient(x, k) for x in X] for k in range(K + 1)]


def variational_coefficients(jacobian, t0: arb, X: list, K: int, cols: list) -> list:
    """V[k][i][j]: the k-th Taylor coefficient of ∂x_i/∂y_j along the series X (from :func:`series_solution`),
    y_j = x0_j for j < d and the parameter of Jacobian column ``cols[j]`` beyond: V' = J_x V + J_p,
    V(0) = [I | 0]. ``jacobian(T, *X)`` (parameter-bound) returns ∂f_i/∂(x, p)_c row by row."""
    d = len(X)
    n = len(cols)
    with arb_context(cap=K + 1):
        T = arb_series([t0, 1])
        flat = jacobian(T, *X)
    width = len(flat) // d
    J = [[flat[i * width + c] for c in cols] for i in range(d)]
    one, zero = arb(1), arb(0)
    with arb_context(cap=1):
        V = [[arb_series([one if i == j else zero]) for j in range(n)] for i in range(d)]
    V0 = [[one if i == j else zero for j in range(n)] for i in range(d)]
    for m in range(1, K + 1):
        with arb_context(cap=m + 1):
            new = []
            for i in range(d):
                Ji = J[i]
                row = []
                for j in range(n):
                    acc = Ji[j] if j >= d else None  # ∂f_i/∂p of column j
                    for k in range(d):
                        term = V[k][j] * Ji[k]
                        acc = term if acc is None else acc + term
                    row.append(acc.integral() + V0[i][j])
                new.append(row)
            V = new
    if any(V[i][j].prec < K + 1 for i in range(d) for j in range(n)):
        raise ArithmeticError(f"a variational series was truncated below length {K + 1} (series cap)")
    return [[[coefficient(V[i][j], k) for j in range(n)] for i in range(d)] for k in range(K + 1)]
