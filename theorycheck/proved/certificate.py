"""Certificates of a proved α_c bracket, at every depth, as data: the one writer.

:func:`certificate_of` writes, in the format of the proved-fate system that made the proof
(:class:`~theorycheck.proved.fate_system.FateSystem`: ``FORMAT``), the exact ``inputs`` the proof is about (z, ρ,
L as exact decimal strings), what it states, the system (its name, states, parameters, fields as sympy text and
their identity, a sha256 of that text; at even L ≥ 4 also L), the bracket, both runs as the system records them
(:meth:`~theorycheck.proved.fate_system.FateSystem.run_data`: every validated step, every ball as [exact decimal
midpoint, decimal radius rounded up]) and a digest of the whole (a transport check, no evidence).

The one checker is :func:`theorycheck.proofs.minor_first.proved.checker.check_certificate`: it re-derives the claim from the inputs
alone and re-checks every inclusion with code that shares nothing with the integrator but the ball arithmetic.
"""

from __future__ import annotations

import json

from theorycheck.proved.check import check_certificate_path, digest, field_identity

__all__ = ["certificate_of", "inputs_of", "write_certificate", "write_json"]


def inputs_of(result, system) -> dict:
    """The exact inputs a proof is about, as a certificate writes them: ``result.inputs`` when the proof recorded
    them, else the system's (what its balls contain)."""
    inputs = getattr(result, "inputs", None)
    out = (inputs if inputs is not None else system.inputs).as_dict()
    out["depth"] = int(system.depth)
    return out


def certificate_of(result, system=None) -> dict:
    """The certificate (a JSON-able dict) of a :class:`~theorycheck.proved.bracket.ProvedAlphaC` made with
    ``record=True`` runs (its ``lower``, ``upper``, ``collapses``, ``grows``); ``system``: the proved-fate
    system that ran them (default ``result.system``)."""
    import sympy as sp

    system = system if system is not None else result.system
    name, states, params, fields, extra = system.certificate_system()
    sysd = {"name": name, **extra, "d": system.d, "states": [str(v) for v in states],
            "params": [str(v) for v in params], "fields": [sp.srepr(e) for e in fields],
            "identity": field_identity(fields)}
    cert = {"format": system.FORMAT, "statement": system.statement(), "inputs": inputs_of(result, system),
            "system": sysd, "lower": result.lower, "upper": result.upper,
            "runs": [system.run_data(fate) for fate in (result.collapses, result.grows)]}
    cert["digest"] = digest(cert)
    return cert


def write_certificate(path, result, system=None) -> None:
    """Write :func:`certificate_of` to ``path`` (checked first: :func:`theorycheck.proved.check.check_certificate_path`)."""
    write_json(path, certificate_of(result, system))


def write_json(path, cert: dict) -> None:
    """A certificate written to ``path`` (checked by the output rule, its folders created); an unwritable path is a
    one-line error."""
    from theorycheck.errors import TheorycheckError
    from theorycheck.outputs import make_parent

    make_parent(check_certificate_path(path), "certificate")
    try:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(cert, fh, ensure_ascii=False)
    except OSError as exc:
        raise TheorycheckError(f"certificate={str(path)!r}: cannot be written ({exc.strerror or exc})") from None
