"""The certificate checker checks the claim, not the file (proved/check.py): forged certificates whose digest is
recomputed (a plain sha256 anyone can redo) are rejected for what they fail to prove; untrusted files are read with
bounded size and nesting, with one-line errors; a certificate path that cannot be written fails before the work."""

from __future__ import annotations

import copy
import json
from types import SimpleNamespace

import pytest
from theorycheck.proofs.minor_first.proved.checker import check_certificate
from theorycheck.proofs.minor_first.proved.ratio_blowup import RatioBlowup
from theorycheck.proofs.minor_first.proved.reduced_l2 import ReducedL2

from theorycheck.proved.certificate import certificate_of
from theorycheck.proved.check import (
    CertificateError,
    check_certificate_path,
    digest,
    read_certificate,
)

LEMMA_NAMES, LEMMA_NAMES_DEPTH = ReducedL2.LEMMA_NAMES, RatioBlowup.LEMMA_NAMES


@pytest.fixture(scope="module")
def l2():
    """A wide but true bracket of α_c = 0.4364… for z = (1, 2, 3), ρ = 1: α = 0.38 collapses, α = 0.46 grows."""
    pr = ReducedL2([1, 2, 3], 1, 4)
    lo, hi = pr.run("0.38", record=True), pr.run("0.46", record=True)
    assert (lo.fate, hi.fate) == ("collapse", "growth")
    return certificate_of(SimpleNamespace(lower="0.38", upper="0.46", collapses=lo, grows=hi), pr)


@pytest.fixture(scope="module")
def depth():
    """A wide but true bracket of α_c(4) = 0.3554… for z = (1, 2), ρ = 1: α = 0.25 collapses, α = 0.45 grows."""
    pr = RatioBlowup([1.0, 2.0], 1.0, 3, depth=4)
    lo, hi = pr.run("0.25", record=True), pr.run("0.45", record=True)
    assert (lo.fate, hi.fate) == ("collapse", "growth")
    return certificate_of(SimpleNamespace(lower="0.25", upper="0.45", collapses=lo, grows=hi), pr)


KINDS = {"l2": (check_certificate, LEMMA_NAMES), "depth": (check_certificate, LEMMA_NAMES_DEPTH)}


def _forged(cert, edit):
    """``cert`` edited, with its digest recomputed: the digest is no evidence, so only the claim can reject it."""
    c = copy.deepcopy(cert)
    edit(c)
    c["digest"] = digest(c)
    return c


def _mid(a: str, b: str) -> str:
    return str((float(a) + float(b)) / 2)


def _set(key, value):
    def edit(c):
        c[key] = value(c) if callable(value) else value
    return edit


def _run(i, key, value):
    def edit(c):
        c["runs"][i][key] = value(c) if callable(value) else value
    return edit


def _inputs(key, value):
    def edit(c):
        c["inputs"][key] = value(c) if callable(value) else value
    return edit


def _swap_ends(c):
    c["lower"], c["upper"] = c["upper"], c["lower"]
    c["runs"].reverse()


def _both(*edits):
    def edit(c):
        for e in edits:
            e(c)
    return edit


#: the failures of an inclusion that a step or the start set does not satisfy
INCLUSION = ("does not contain", "fails the Picard test")
# forgery -> (edit, a word of the failure that names it, or several words any of which does)
FORGERIES = {
    "no runs and any bracket": (_both(_set("runs", []), _set("lower", "5"), _set("upper", "0.001")), "runs"),
    "no runs and a true bracket": (_set("runs", []), "exactly two"),
    "only the collapse run": (_set("runs", lambda c: c["runs"][:1]), "exactly two"),
    "only the growth run": (_set("runs", lambda c: c["runs"][1:]), "exactly two"),
    "the collapse run twice": (_set("runs", lambda c: [c["runs"][0], copy.deepcopy(c["runs"][0])]), "run 2"),
    "z gained an entry while d stayed": (_inputs("z", lambda c: c["inputs"]["z"] + ["4"]), "d = len(z)"),
    "z lost an entry while d stayed": (_inputs("z", lambda c: c["inputs"]["z"][:-1]), "d = len(z)"),
    "swapped ends": (_swap_ends, "lower < upper"),
    "swapped runs": (_set("runs", lambda c: c["runs"][::-1]), "run 1"),
    "a bracket wider than the runs' α": (_set("lower", lambda c: _mid("0", c["lower"])), "starts at α"),
    "a bracket narrower than the runs' α": (_set("upper", lambda c: _mid(c["lower"], c["upper"])), "starts at α"),
    "the collapse run moved with the bracket": (_both(_set("lower", lambda c: _mid(c["lower"], c["upper"])),
                                                      _run(0, "alpha", lambda c: c["lower"])), INCLUSION),
    "a run at another ρ": (_inputs("rho", "1.01"), INCLUSION),
    "another z": (_inputs("z", lambda c: c["inputs"]["z"][:-1] + ["2.5"]), INCLUSION),
    "a collapse run that names a growth lemma": (_run(0, "lemma", lambda c: _lemmas(c)["growth"][0]), "lemma"),
    "an unknown lemma": (_run(1, "lemma", "growth: trust me"), "lemma"),
    "a collapse run that claims growth": (_run(0, "fate", "growth"), "needs collapse"),
    "no inputs": (lambda c: c.pop("inputs"), "inputs"),
    "non-positive z": (_inputs("z", lambda c: ["-1"] + c["inputs"]["z"][1:]), "z > 0"),
    "inputs of another depth": (_inputs("depth", lambda c: 6 if c["inputs"]["depth"] == 2 else 2), "depth"),
    "the field of another dimension": (lambda c: c["system"].update(_other_system(c)), "field"),
    "a format of an older version": (_set("format", lambda c: c["format"][:-1] + "1"), "older"),
    "an absurd precision": (_run(1, "prec", 10**9), "precision"),
    "an absurd order": (lambda c: _steps(c, 0)[0].update(order=10**6), "order"),
    "a step that is not a ball": (lambda c: _steps(c, 1)[0].update(t0=5), "malformed"),
}


def _lemmas(c) -> dict:
    return LEMMA_NAMES_DEPTH if "depth" in c["format"] else LEMMA_NAMES


def _steps(c, i) -> list:
    run = c["runs"][i]
    return run["steps"] if "steps" in run else run["segments"][0]["steps"]


def _other_system(c) -> dict:
    import sympy as sp

    from theorycheck.proved.check import field_identity
    from theorycheck.symbolic import validated_fields as S

    d = c["system"]["d"] + 1
    f = S.ratio_blowup_system(4, d)[3] if "depth" in c["format"] else S.reduced_l2_system(d, frame=True)[3]
    return {"fields": [sp.srepr(e) for e in f], "identity": field_identity(f)}


@pytest.mark.parametrize("kind", list(KINDS))
def test_the_certificates_as_written_are_accepted(kind, request):
    cert = request.getfixturevalue(kind)
    check, _ = KINDS[kind]
    res = check(copy.deepcopy(cert))
    assert res.ok and res.digest_ok and res.failures == [], res.failures
    assert res.inputs == {"z": cert["inputs"]["z"], "rho": cert["inputs"]["rho"], "depth": cert["inputs"]["depth"]}
    assert res.as_dict()["strength"]["kind"] in ("proved", "not decided", "floating-point check")
    assert check_certificate(copy.deepcopy(cert)).ok


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("name", list(FORGERIES))
def test_forgeries_are_rejected_for_what_they_fail_to_prove(kind, name, request):
    cert = request.getfixturevalue(kind)
    check, _ = KINDS[kind]
    edit, word = FORGERIES[name]
    res = check(_forged(cert, edit), stop_at_first=True)
    assert not res.ok and res.digest_ok  # the digest was recomputed: the claim rejects it
    words = (word,) if isinstance(word, str) else word
    assert any(w in f for f in res.failures for w in words), (name, res.failures)
    assert res.as_dict()["strength"]["kind"] == "not decided"


def test_a_growth_lemma_that_does_not_hold_at_the_end_is_rejected(l2):
    # the growth run ends in one of two growth lemmas; naming the other one (which does not hold there) is a forgery
    used = l2["runs"][1]["lemma"]
    other = next(n for n in LEMMA_NAMES["growth"] if n != used)
    res = check_certificate(_forged(l2, _run(1, "lemma", other)))
    assert not res.ok and any("does not hold at the end" in f for f in res.failures), res.failures


def test_an_inexact_frame_and_a_start_away_from_zero_are_rejected(l2):
    def inexact(c):
        c["runs"][0]["segments"][1]["kappa"][1] = "1e-30"

    def moved(c):
        c["runs"][1]["segments"][0]["steps"][0]["x0"][0] = ["0.001", "0.0001"]
    assert any("κ is not an exact" in f for f in check_certificate(_forged(l2, inexact)).failures)
    assert any("first state" in f for f in check_certificate(_forged(l2, moved), stop_at_first=True).failures)


def test_a_carried_parameter_must_be_named_once_and_be_a_parameter(depth):
    for coords in (["lam", "omega1"], ["lam", "omega1", "omega2", "rho"], ["lam", "omega1", "omega2", "z1", "z1"]):
        res = check_certificate(_forged(depth, _run(0, "coordinates", coords)))
        assert not res.ok and any("coordinates" in f for f in res.failures), (coords, res.failures)


# ---------------------------------------------------------------- untrusted files
def test_deeply_nested_json_is_a_one_line_error(tmp_path):
    from theorycheck.cli.main import main

    p = tmp_path / "deep.json"
    p.write_text("[" * 200_000 + "]" * 200_000)
    with pytest.raises(CertificateError, match="nested deeper"):
        read_certificate(p)
    assert main(["check-certificate", str(p)]) == 2
    p.write_text('{"a": ' + "[" * 40 + "]" * 40 + "}")  # within Python's parser, beyond the bound a certificate needs
    with pytest.raises(CertificateError, match="nested deeper than 32"):
        read_certificate(p)


@pytest.mark.parametrize("text,match", [('{"format": NaN}', "NaN"), ("[1, 2]", "JSON object"),
                                        ('{"a": ', "not valid JSON"), ("\udcff", "UTF-8")])
def test_bad_files_are_one_line_errors(tmp_path, text, match):
    p = tmp_path / "bad.json"
    p.write_bytes(text.encode("utf-8", "surrogateescape"))
    with pytest.raises(CertificateError, match=match):
        read_certificate(p)


def test_a_file_larger_than_the_bound_is_refused_before_it_is_read(tmp_path):
    p = tmp_path / "big.json"
    p.write_text(json.dumps({"pad": "x" * 1000}))
    with pytest.raises(CertificateError, match="bytes"):
        read_certificate(p, max_bytes=100)
    with pytest.raises(CertificateError, match="cannot be read"):
        read_certificate(tmp_path / "missing.json")


def test_the_cli_prints_one_line_for_unreadable_files(tmp_path, capsys):
    from theorycheck.cli.main import main

    for path in (tmp_path, tmp_path / "missing.json"):
        assert main(["check-certificate", str(path)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err


def test_the_cli_rejects_a_forgery_with_exit_status_1(l2, tmp_path, capsys):
    from theorycheck.cli.main import main

    p = tmp_path / "forged.json"
    p.write_text(json.dumps(_forged(l2, _set("runs", []))))
    assert main(["check-certificate", str(p)]) == 1
    assert "REJECTED" in capsys.readouterr().out
    good = tmp_path / "good.json"
    good.write_text(json.dumps(l2))
    assert main(["check-certificate", "--json", str(good)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] and doc["inputs"]["z"] == ["1", "2", "3"] and doc["strength"]["kind"] == "proved"


# ---------------------------------------------------------------- where a certificate is written
def test_a_certificate_path_that_cannot_be_written_fails_first(tmp_path):
    # the one output rule (theorycheck.outputs.RULE): missing folders are created; a file on the way, a folder
    # given for a file, an empty name are refused before any work
    from theorycheck.errors import TheorycheckError

    (tmp_path / "afile").write_text("x")
    for bad, match in ((tmp_path / "afile" / "c.json", "is a file"), (tmp_path, "is a folder"), ("", "empty")):
        with pytest.raises(TheorycheckError, match=match):
            check_certificate_path(bad)
    check_certificate_path(tmp_path / "new" / "folder" / "c.json")  # created when written


def test_thresholds_refuses_an_unwritable_certificate_path_before_the_proof(tmp_path, monkeypatch, capsys):
    import theorycheck.proofs.minor_first.proved.alpha_c as pa

    from theorycheck.cli.main import main

    def no_work(*a, **k):
        raise AssertionError("the proof ran before the certificate path was checked")
    monkeypatch.setattr(pa, "prove_alpha_c", no_work)
    (tmp_path / "afile").write_text("x")
    bad = str(tmp_path / "afile" / "c.json")
    assert main(["thresholds", "--z", "1,2,3", "--rho", "1", "--prove", "--certificate", bad]) == 2
    err = capsys.readouterr().err
    assert "afile" in err and "is a file" in err and err.count("\n") == 1


def test_a_certificate_in_a_missing_folder_is_written_there(tmp_path, l2):
    from theorycheck.proved.certificate import write_json

    path = tmp_path / "no" / "such" / "dir" / "c.json"
    write_json(path, l2)
    assert check_certificate(str(path)).ok
