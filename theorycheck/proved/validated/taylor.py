"""Taylor coefficients of the solution of dx/dt = f(t, x) through (t0, x0), by series arithmetic.

Picard iteration on truncated power series, x ← x0 + ∫ f(t0 + s, x(s)) ds: after n sweeps the
coefficients of s^0 … s^n are exact (each sweep fixes one more), so the series length (python-flint's
global ``ctx.cap``) is set to n + 1 for sweep n and restored after. With ball inputs (t0, x0 balls)
every coefficient is a ball enclosing the coefficient for every point of the inputs: the (K+1)-th
coefficient over the a-priori box is the Taylor remainder's factor.

With the Jacobian J = ∂f/∂x: Newton's iteration on series doubles the number of exact coefficients per
pass, so order K costs ⌈log₂(K + 1)⌉ field evaluations instead of K sweeps. If x̃ agrees with the solution x*
through s^{n−1} (x̃ − x* = e = O(s^n), e(0) = 0), the correction δ of δ' = J(s) δ + r(s), δ(0) = 0, with
J = ∂f/∂x(t0 + s, x̃(s)) and r = f(t0 + s, x̃(s)) − x̃'(s), makes u = x̃ + δ − x* solve u' = J u + O(s^{2n}),
u(0) = 0 (the residual is (J − J*) e + O(e²) = O(s^{2n}), J* the Jacobian along x*), so u = O(s^{2n+1}): x̃ + δ
agrees with x* through s^{2n}. The linear equation is solved coefficient by coefficient,
(m + 1) δ_{m+1} = r_m + Σ_{k=n}^{m} J_{m−k} δ_k (δ = O(s^n)), products of numbers only. The statement holds for
*every* x̃ that agrees through s^{n−1}, whatever its higher coefficients (here zero), so with balls it is
inclusion isotonicity: for every point of the input balls, the series with the true first n coefficients (and
zeros after) lies in the ball series iterated, and its Newton image — which agrees with the true solution through
s^{2n} — lies in the image computed in ball arithmetic. Each pass is computed at length ``cap`` =
min(2n + 1, K + 1), and a series of f or J shorter than the pass needs raises, as in Picard's iteration.
"""

from __future__ import annotations

from flint import arb, arb_mat, arb_series

from theorycheck.arith.balls import arb_context


def coefficient(s: arb_series, k: int) -> arb:
    """The k-th coefficient of a series (0 beyond its stored length)."""
    c = s.coeffs()
    return c[k] if k < len(c) else arb(0)


def series_solution(field, t0: arb, x0: list, K: int, field_jacobian=None) -> list:
    """The solution's Taylor series through (t0, x0) to order K (length K + 1), one per state;
    ``field(T, *X)`` evaluates the (parameter-bound) field on series. ``field_jacobian(T, *X)``: the d values
    of f followed by the d × d entries ∂f_i/∂x_j (row by row) on series — then by Newton's iteration (module
    docstring), else by Picard's."""
    d = len(x0)
    if field_jacobian is not None:
        return _newton(field_jacobian, t0, x0, K)
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


def _newton(field_jacobian, t0: arb, x0: list, K: int) -> list:
    """The Taylor series of the solution through (t0, x0), length K + 1 each, by Newton's iteration; each pass's
    linear equation δ' = J δ + r is solved coefficient by coefficient (no field evaluation)."""
    d = len(x0)
    coeffs, n = [[x] for x in x0], 1  # coefficients s^0 … s^(n−1) enclose the solution's
    one, zero = arb(1), arb(0)
    while n < K + 1:
        L = min(2 * n + 1, K + 1)
        with arb_context(cap=L):
            T = arb_series([t0, one], prec=L)
            W = [arb_series(c, prec=L) for c in coeffs]  # zeros beyond s^(n−1): one admissible x̃
            out = [v if isinstance(v, arb_series) else arb_series([v], prec=L)  # a constant: any length
                   for v in field_jacobian(T, *W)]
            R = [out[i] - W[i].derivative() for i in range(d)]
        J = out[d:]
        short = min(v.prec for v in (*R, *J))
        if short < L - 1:  # a truncated series: its coefficients would be wrong
            raise ArithmeticError(f"a Taylor series was truncated at length {short} < {L - 1} (series cap)")
        rc = [_padded(v, L, zero) for v in R]
        Jc = [[_padded(J[i * d + j], L, zero) for j in range(d)] for i in range(d)]
        # r = O(s^(n−1)) for the admissible x̃: its first n − 1 coefficients are exactly 0 for every point of the
        # inputs (in ball arithmetic they are wide balls around 0, never used here). δ = O(s^n) solves
        # (m + 1) δ_{m+1} = r_m + Σ_{k=n}^{m} J_{m−k} δ_k, m = n − 1 … L − 2; x̃'s first n coefficients stay.
        for m in range(n - 1, L - 1):
            new = []
            for i in range(d):
                acc = rc[i][m]
                for j in range(d):
                    Jij, cj = Jc[i][j], coeffs[j]
                    for k in range(n, m + 1):
                        acc += Jij[m - k] * cj[k]
                new.append(acc / (m + 1))
            for i in range(d):
                coeffs[i].append(new[i])
        n = L
    with arb_context(cap=K + 1):
        return [arb_series(c, prec=K + 1) for c in coeffs]


def _padded(s: arb_series, L: int, zero: arb) -> list:
    c = s.coeffs()
    return c + [zero] * (L - len(c))


def taylor_coefficients(field, t0: arb, x0: list, K: int) -> list:
    """coef[k][i]: the k-th Taylor coefficient (x_i^{(k)}/k!) of the solution through (t0, x0), k = 0 … K."""
    X = series_solution(field, t0, x0, K)
    return [[coefficient(x, k) for x in X] for k in range(K + 1)]


def variational_coefficients(jacobian, t0: arb, X: list, K: int, cols: list) -> list:
    """V[k][i][j]: the k-th Taylor coefficient of ∂x_i/∂y_j along the series X (from :func:`series_solution`),
    y_j = x0_j for j < d and the parameter of Jacobian column ``cols[j]`` beyond: V' = J_x V + J_p,
    V(0) = [I | 0]. ``jacobian(T, *X)`` (parameter-bound) returns ∂f_i/∂(x, p)_c row by row. The equation is
    linear, so its coefficients follow from J's by the recurrence (m + 1) V_{m+1} = J_{p,m} + Σ_{l=0}^{m}
    J_{x,m−l} V_l, in ball-matrix products (each coefficient a ball containing the exact one for every point of
    the balls J was evaluated on)."""
    d = len(X)
    n = len(cols)
    with arb_context(cap=K + 1):
        T = arb_series([t0, 1])
        flat = jacobian(T, *X)
    width = len(flat) // d
    one, zero = arb(1), arb(0)
    J = [[_first(flat[i * width + c], K, zero) for c in cols] for i in range(d)]
    Jx = [arb_mat(d, d, [J[i][k][m] for i in range(d) for k in range(d)]) for m in range(K)]
    Jp = [arb_mat(d, n, [J[i][j][m] if j >= d else zero for i in range(d) for j in range(n)]) for m in range(K)]
    V = [arb_mat(d, n, [one if i == j else zero for i in range(d) for j in range(n)])]
    for m in range(K):
        acc = Jp[m] if n > d else None  # ∂f/∂p of the parameter columns
        for l in range(m + 1):
            term = Jx[m - l] * V[l]
            acc = term if acc is None else acc + term
        V.append(acc / (m + 1))
    return [[[V[k][i, j] for j in range(n)] for i in range(d)] for k in range(K + 1)]


def _first(v, K: int, zero: arb) -> list:
    """The coefficients s^0 … s^(K−1) of a series (a constant ball: itself, then zeros); a series truncated
    below length K raises."""
    if not isinstance(v, arb_series):
        return [v] + [zero] * (K - 1)
    if v.prec < K:
        raise ArithmeticError(f"a variational series was truncated below length {K + 1} (series cap)")
    c = v.coeffs()[:K]
    return c + [zero] * (K - len(c))
