"""The claims runner: holds / fails (with a shrunk counterexample) / inconclusive."""

from hypothesis import strategies as st

from theorycheck.claims.claim import FAILS, HOLDS, INCONCLUSIVE, Claim, Outcome
from theorycheck.claims.runner import run_claim


def test_holds():
    c = Claim("T.sq", "x² ≥ 0", st.floats(-10, 10), lambda x: Outcome(x * x >= 0, 0.0), "exact")
    v = run_claim(c, examples=20)
    assert v.status == HOLDS and v.tried == 20 and v.inconclusive == 0


def test_fails_and_shrinks():
    c = Claim("T.small", "x < 5", st.integers(0, 1000), lambda x: Outcome(x < 5, float(x)), "exact",
              describe=lambda x: {"x": x})
    v = run_claim(c, examples=50)
    assert v.status == FAILS and v.counterexample == {"x": 5}  # hypothesis shrinks to the boundary


def test_pinned_edge_case_fails_first():
    c = Claim("T.pin", "x ≠ 0", st.integers(1, 5), lambda x: Outcome(x != 0), "exact", pinned=[0],
              describe=lambda x: {"x": x})
    v = run_claim(c, examples=5)
    assert v.status == FAILS and v.counterexample == {"x": 0} and "pinned" in v.message


def test_inconclusive_is_never_holds():
    c = Claim("T.budget", "budget", st.integers(0, 3), lambda x: Outcome(None if x == 2 else True), "exact")
    v = run_claim(c, examples=30)
    assert v.status == INCONCLUSIVE and v.inconclusive >= 1


def test_refined_claim_runs_when_original_fails():
    refined = Claim("T.refined", "x ≤ 1000", st.integers(0, 1000), lambda x: Outcome(x <= 1000), "exact")
    c = Claim("T.orig", "x < 5", st.integers(0, 1000), lambda x: Outcome(x < 5), "exact", refined=refined)
    v = run_claim(c, examples=30)
    assert v.status == FAILS and v.refined is not None and v.refined.status == HOLDS
    d = v.as_dict()
    assert d["refined"]["status"] == HOLDS


def test_a_crashing_check_is_an_error_verdict():
    def bad(x):
        raise ZeroDivisionError("boom")

    v = run_claim(Claim("T.crash", "crash", st.integers(0, 3), bad, "exact", describe=lambda x: {"x": x}), examples=3)
    assert v.status == "error" and "ZeroDivisionError" in v.message and v.counterexample is not None


def test_inconclusive_inputs_are_reported_with_what_ran_out():
    c = Claim("T.budget2", "budget", st.integers(0, 50),
              lambda x: Outcome(None, detail={"stopped_because": f"max_steps at x = {x}"}) if x % 2 else Outcome(True),
              "exact", pinned=[1, 3, 5, 7], describe=lambda x: {"x": x})
    v = run_claim(c, examples=10)
    assert v.status == INCONCLUSIVE and v.inconclusive >= 4
    shown = v.as_dict()["inconclusive_examples"]
    assert len(shown) == 3  # the first three, pinned first
    assert shown[0] == {"input": {"x": 1}, "detail": {"stopped_because": "max_steps at x = 1"}}
    assert run_claim(Claim("T.ok", "ok", st.integers(0, 3), lambda x: Outcome(True), "exact"),
                     examples=3).inconclusive_examples == []


def test_numpy_numbers_become_plain_python():
    import numpy as np

    from theorycheck.jsonio import to_plain

    d = to_plain({"a": np.float64(0.25), "b": [np.float64("inf"), np.int64(3)], "c": np.array([1.0])})
    assert type(d["a"]) is float and repr(d) == "{'a': 0.25, 'b': [inf, 3], 'c': [1.0]}"
    assert to_plain({"x": np.float64("nan")}, "string") == {"x": "nan"}


def _import_new_local_module(tmp_path, name, constants):
    """A module outside site-packages, which hypothesis ≥ 6.131 would harvest constants from."""
    import importlib
    import sys

    (tmp_path / f"{name}.py").write_text("".join(f"C{i} = {c}\n" for i, c in enumerate(constants)))
    sys.path.insert(0, str(tmp_path))
    try:
        importlib.import_module(name)
    finally:
        sys.path.remove(str(tmp_path))


def test_drawn_inputs_do_not_depend_on_modules_loaded_before(tmp_path):
    """The same claim, seed and examples draw the same inputs after a new local module (full of
    integers in the drawn range) is imported: hypothesis's local-constant pool is not used."""
    seen: list[list[int]] = [[], []]
    for k in range(2):
        c = Claim("T.draws", "draws", st.lists(st.integers(0, 10_000), min_size=3, max_size=3),
                  lambda x, k=k: (seen[k].extend(x), Outcome(True))[1], "exact")
        assert run_claim(c, examples=60).status == HOLDS
        if k == 0:
            _import_new_local_module(tmp_path, "tc_constants_probe", range(17, 10_000, 13))
    assert seen[0] == seen[1] and len(seen[0]) == 180


def test_a_claim_verdict_is_the_same_alone_and_after_other_claims(tmp_path):
    """LM.l1 alone, then after other packs' claims ran (and a new local module was imported):
    the same verdict dict (tried, inconclusive, worst deviation, counterexample), seconds aside."""
    from theorycheck.packs import candidates

    by_key = {c.key: c for _, c in candidates(None)}

    def plain(v):
        d = v.as_dict()
        d.pop("seconds", None)
        if isinstance(d.get("refined"), dict):
            d["refined"].pop("seconds", None)
        return d

    alone = plain(run_claim(by_key["LM.l1"], examples=8))
    for key in ("C1.one-example", "KR.l2"):
        run_claim(by_key[key], examples=3)
    # fewer than 1024 constants: hypothesis skips a module with more
    _import_new_local_module(tmp_path, "tc_constants_probe2", list(range(101, 10_001, 11)) + [640, 1000])
    after = plain(run_claim(by_key["LM.l1"], examples=8))
    assert alone == after and alone["tried"] == 9


def test_a_claims_own_cap_is_reported_with_what_was_drawn():
    c = Claim("T.cap", "x² ≥ 0", st.floats(-10, 10), lambda x: Outcome(x * x >= 0, 0.0), "exact", pinned=[0.0, 1.0],
              max_examples=7)
    v = run_claim(c, examples=50)
    assert (v.tried, v.pinned, v.drawn, v.requested, v.cap) == (9, 2, 7, 50, 7)
    d = v.as_dict()
    assert (d["tried"], d["pinned"], d["drawn"], d["requested"], d["cap"]) == (9, 2, 7, 50, 7)
    v = run_claim(c, examples=5)  # a cap above the request is no cap
    assert (v.tried, v.drawn, v.requested, v.cap) == (7, 5, 5, None)


def test_verify_text_says_what_each_claim_drew(capsys):
    from theorycheck import register_claim, unregister_claim
    from theorycheck.cli.main import main

    c = Claim("user.cap", "x² ≥ 0", st.floats(-10, 10), lambda x: Outcome(x * x >= 0, 0.0), "exact", pinned=[0.0],
              max_examples=3)
    register_claim(c)
    try:
        rc = main(["verify", "--claims", "user.cap", "--examples", "20"])
    finally:
        unregister_claim("user.cap")
    out = capsys.readouterr().out
    assert rc == 0
    assert "1 claim, up to 20 drawn inputs each" in out and "1 claims" not in out
    assert "user.cap draws at most 3 inputs, its own cap (max_examples; 20 requested): 4 tried = 1 pinned + 3 drawn." in out
