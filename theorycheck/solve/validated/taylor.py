"""Taylor coefficients of the solution of dx/dt = f(t, x; p) through (t0, x0), by series arithmetic.

Picard iteration on truncated power series, x ← x0 + ∫ f(t0 + s, x(s)) ds: after n sweeps the
coefficients of s^0 … s^n are exact (each sweep fixes one more), so the series length (python-flint's
global ``ctx.cap``) is set to n + 1 for sweep n and restored after. With ball inputs (t0, x0, p
balls) every coefficient is a ball enclosing the coefficient for every point of the inputs: the
(K+1)-th coefficient over the a-priori box is the Taylor remainder's factor.
"""

from __future__ import annotations

from flint import arb, arb_series

from theorycheck.solve.validated.balls import arb_context


def _coeffs(s: arb_series, n: int) -> list[arb]:
    c = list(s.coeffs())
    return c + [arb(0)] * (n - len(c)) if len(c) < n else c[:n]


def series_solution(field, t0: arb, x0: list[arb], params: list[arb], K: int) -> list[arb_series]:
    """The solution's Taylor series through (t0, x0) to order K (length K + 1), one per state."""
    d = len(x0)
    X = None
    with arb_context(cap=1):
        X = [arb_series([x]) for x in x0]
    for n in range(1, K + 1):
        with arb_context(cap=n + 1):
            T = arb_series([t0, 1])
            F = field(T, *X, *params)
            X = [F[i].integral() + x0[i] for i in range(d)]
    return X


def taylor_coefficients(field, t0: arb, x0: list[arb], params: list[arb], K: int) -> list[list[arb]]:
    """coef[k][i]: the k-th Taylor coefficient (x_i^{(k)}/k!) of the solution through (t0, x0), k = 0 … K."""
    X = series_solution(field, t0, x0, params, K)
    cols = [_coeffs(x, K + 1) for x in X]
    return [[cols[i][k] for i in range(len(x0))] for k in range(K + 1)]


def variational_coefficients(jacobian, t0: arb, X: list[arb_series], params: list[arb], K: int,
                             n_free: int, free_params: list[int]) -> list[list[list[arb]]]:
    """V[k][i][j]: the k-th Taylor coefficient of ∂x_i/∂y_j along the series X (from :func:`series_solution`),
    y = (x0, the parameters listed in ``free_params``): V' = J_x V + J_p, V(0) = [I | 0]. ``jacobian``
    returns ∂f_i/∂(x, p)_j row by row (d × (d + m)); ``n_free`` = d + len(free_params)."""
    d = len(X)
    m_all = len(params)
    cols = [*range(d), *[d + p for p in free_params]]
    with arb_context(cap=K + 1):
        T = arb_series([t0, 1])
        Jflat = jacobian(T, *X, *params)
    width = d + m_all
    J = [[Jflat[i * width + c] for c in cols] for i in range(d)]
    one, zero = arb(1), arb(0)
    V = None
    with arb_context(cap=1):
        V = [[arb_series([one if i == j else zero]) for j in range(n_free)] for i in range(d)]
    V0 = [[one if i == j else zero for j in range(n_free)] for i in range(d)]
    for n in range(1, K + 1):
        with arb_context(cap=n + 1):
            new = []
            for i in range(d):
                Ji = J[i]
                row = []
                for j in range(n_free):
                    acc = Ji[j] if j >= d else None  # ∂f_i/∂p (the free parameter of column j)
                    for k in range(d):
                        term = Ji[k] * V[k][j]
                        acc = term if acc is None else acc + term
                    row.append(acc.integral() + V0[i][j])
                new.append(row)
            V = new
    out = [[[arb(0)] * n_free for _ in range(d)] for _ in range(K + 1)]
    for i in range(d):
        for j in range(n_free):
            c = _coeffs(V[i][j], K + 1)
            for k in range(K + 1):
                out[k][i][j] = c[k]
    return out
