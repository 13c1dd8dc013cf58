"""E1 as claims (several examples, balanced L = 2, uniform α): "GD's j† does not move".

C6 checks GD for one example, where ln u_j grows like z_j t for every coordinate at once. With
several examples, d ln u_j/dt = Σ_i w_i(t) z_ij with weights w_i = −ℓ'(m_i)/n that change as the
margins m_i grow, so the coordinate that leads early (largest Σ_i z_ij at equal weights) need not
lead later. What does hold (proved below): if one coordinate j has the largest entry of every
example (z_ij ≥ z_ik for all i, k), then d(ln u_j − ln u_k)/dt = Σ_i w_i (z_ij − z_ik) ≥ 0, so j
leads from the start and forever (uniform init).
"""

from __future__ import annotations


def _e1_register():
    import numpy as np
    from hypothesis import strategies as st

    from theorycheck.claims.claim import Claim, Outcome
    from theorycheck.claims.claim import register as register_claim
    from theorycheck.proofs import _numerics as num
    from theorycheck.setting import Setting

    def check(x, refined: bool) -> Outcome:
        Z = np.array(x["Z"], float)
        s = Setting(Z, np.ones(Z.shape[0]), depth=2, optimizer="gd", alpha=x["alpha"])
        tr = num.solve(s, x["t_max"])
        if not tr.successful and tr.stopped_because not in ("t_max",):
            return Outcome(None, detail={"stopped_because": tr.stopped_because})
        sw = num.switches(tr)
        first = num.index_at(tr, min(1e-6, tr.t_end))
        return Outcome(not sw, float(len(sw)), {"initial_index": first, "switches": [list(w) for w in sw]})

    @st.composite
    def datasets(draw, dominant: bool):
        n = draw(st.integers(2, 3))
        d = draw(st.integers(2, 3))
        seed = draw(st.integers(0, 2**31 - 1))
        rng = np.random.default_rng(seed)
        Z = rng.uniform(0.2, 3.0, size=(n, d))
        if dominant:  # one column has the largest entry of every row
            j = int(rng.integers(d))
            Z[:, j] = Z.max(axis=1) + rng.uniform(0.05, 1.0, size=n)
        return {"Z": Z.round(3).tolist(), "alpha": float(draw(st.floats(0.05, 1.0))), "t_max": 60.0}

    counterexample = {"Z": [[4.0, 1.0], [-1.0, 1.0]], "alpha": 0.1, "t_max": 60.0}
    register_claim(Claim(
        key="E1.gd-static",
        statement="E1 (several examples): GD's j† does not move (balanced, L = 2, uniform α)",
        inputs=datasets(False), check=lambda x: check(x, False), pinned=[counterexample], max_examples=4,
        tolerance="exact: no switch of j† between feature values on (0, t_max]",
        refined=Claim(
            key="E1.gd-static-refined",
            statement="(refined by theorycheck) GD's j† does not move when one coordinate has the largest entry of "
                      "every example (then d(ln u_j − ln u_k)/dt = Σ_i w_i (z_ij − z_ik) ≥ 0); otherwise it can: "
                      "Z = ((4, 1), (−1, 1)), α = 0.1 goes 1 → 2 (the ℓ1 max margin is e_2)",
            inputs=datasets(True), check=lambda x: check(x, True), max_examples=4,
            tolerance="exact: no switch of j† on (0, t_max]"),
    ))


_e1_register()
