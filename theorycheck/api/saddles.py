"""``saddles``: the α → 0 jump process of a two-layer diagonal network (the pack saddle-to-saddle), exact:
the library call behind ``theorycheck saddles`` (docs/commands/saddles.md)."""

from __future__ import annotations

from pathlib import Path

from theorycheck.errors import ArgumentError, TheorycheckError
from theorycheck.record import Keys, ListOf, Record
from theorycheck.strength import KEYS as STRENGTH_KEYS

__all__ = ["SaddlesResult", "saddles"]


class SaddlesResult(Record):
    """The jump process of a two-layer diagonal network as α → 0, exact: what ``theorycheck saddles --json``
    prints (docs/commands/saddles.md)."""

    KEYS = Keys("saddles", "n", "d", "status", "kkt", "from_float", strength=STRENGTH_KEYS,
                jumps=ListOf(Keys("saddles.jump", "time", "time_exact", "beta", "beta_exact", "support", "entered",
                                  "left", "loss", "loss_exact", "active", "unique")),
                final=Keys("saddles.final", "beta", "beta_exact", "loss", "loss_exact", "l1_norm", "l1_norm_exact",
                           "l1_certificate"),
                non_unique=ListOf(Keys("saddles.non_unique", "jump", "reason", "other_beta_exact")))


def _exact_csv_cells(path) -> tuple[list[list[str]], list[str]]:
    """The cells of a CSV of rows ``x1,…,xd,y`` as typed (strings), after the checks of
    :func:`theorycheck.setting.read_csv` (size, ragged rows, non-numeric cells, an optional header)."""
    import csv

    from theorycheck.setting import read_csv

    X, _ = read_csv(path)
    raw = Path(path).read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    rows = []
    for lineno, row in enumerate(csv.reader(text.splitlines()), start=1):
        cells = [c.strip() for c in row]
        if not cells or all(c == "" for c in cells) or cells[0].startswith("#"):
            continue
        if lineno == 1 and not rows:
            try:
                [float(c) for c in cells]
            except ValueError:
                continue  # the header line
        rows.append(cells)
    if len(rows) != X.shape[0]:  # read_csv and this reading must agree on which lines are data
        raise TheorycheckError(f"{path}: could not read the data rows as typed")
    return [r[:-1] for r in rows], [r[-1] for r in rows]


def saddles(data=None, y=None, *, max_jumps: int = 1000) -> SaddlesResult:
    """The saddles and jump times of the α → 0 limit of gradient flow on β = w₊² − w₋² from w±(0) = α·1
    (square loss, mean over examples, time t̃ = t/ln(1/α); THEORY.md of the pack saddle-to-saddle), in exact
    rational arithmetic. ``data``: a CSV path (rows x1,…,xd,y, numbers as typed), or X (n×d) with ``y``
    (exact numbers: decimal strings, ints, Fractions; a float is its binary value)."""
    from theorycheck.arith.exact import exact
    from theorycheck.proofs.saddle_to_saddle.algorithm import jump_process
    from theorycheck.solvers.l1_interpolator import l1_certificate
    from theorycheck.strength import not_decided, proved

    if isinstance(max_jumps, bool) or not isinstance(max_jumps, int) or max_jumps < 1:
        raise ArgumentError(f"max_jumps={max_jumps!r}: give an integer ≥ 1", "max_jumps")
    if isinstance(data, (str, Path)):
        X, y = _exact_csv_cells(data)
    elif data is None or y is None:
        raise ArgumentError("saddles needs data (a CSV path) or X and y", "data", "y")
    else:
        X, y = data, y
    p = jump_process(X, y, max_jumps=max_jumps)
    from_float = any(exact(v).binary for r in X for v in r) or any(exact(v).binary for v in y)
    out = p.as_dict()
    cert = l1_certificate(p.X, p.y, p.final, p.nu) if p.final_loss == 0 else None
    out["final"]["l1_certificate"] = None if cert is None else cert.ok
    lemmas = [("SS2: each saddle's KKT conditions, checked exactly", proved()),
              ("SS3: the next time from s and ∇L, exact", proved())] + (
        [("SS4: the final saddle's ℓ1 certificate, checked exactly", proved())] if cert is not None and cert.ok else [])
    strength = proved(lemmas) if p.status == "stopped at a zero gradient" and p.kkt else not_decided(
        "max_jumps" if p.status == "jump budget" else "max_iterations" if p.status == "iteration budget"
        else "a saddle failed its KKT check")
    return SaddlesResult({"n": len(p.X), "d": len(p.X[0]), **out, "from_float": from_float,
                          "strength": strength.as_dict()})
