"""What a proved α_c certificate claims, re-derived from its inputs alone, and what every run checker shares: the
checks of the one checker (:func:`theorycheck.proofs.minor_first.proved.checker.check_certificate`), whose run checker of each format
(:class:`RunChecker`: :mod:`theorycheck.proofs.minor_first.proved.check_reduced_l2` at L = 2,
:mod:`theorycheck.proofs.minor_first.proved.check_ratio_blowup` at even L ≥ 4) re-checks every run.

A certificate is untrusted input. :func:`read_certificate` parses it with a bounded size and nesting depth
(one-line :class:`CertificateError` otherwise). :func:`claim_of` re-derives what it may claim and trusts nothing
it says about itself:

- the ``inputs`` (z, ρ, L as exact decimal strings) are read exactly (:mod:`theorycheck.arith.exact`: 0.1 is 1/10);
  d is len(z), and the ``system`` must be the one the symbolic layer derives for (L, d) — the checker rebuilds
  the field from (L, d), evaluates it with its own tree walk (:class:`theorycheck.proved.tape.TreeEval`) and
  compares the hash of its sympy text with the certificate's (a certificate about another field, or whose z has
  more entries than its d, is rejected);
- both ends of the bracket are present and 0 < lower < upper, as exact rationals;
- exactly two runs: the first starts at α = lower and ends in a collapse lemma, the second starts at
  α = upper and ends in a growth lemma (the run checker then re-checks every step and that the named lemma
  holds at the end, at its own balls of the exact inputs);
- the ``digest`` (a plain sha256 of the rest) is only a check that the file arrived as written: anyone can
  recompute it, so it is no evidence and nothing is accepted because of it.

:class:`CertificateCheck` is the checker's answer, with the strength of what an accepted certificate proves
(proved only when every lemma it rests on is proved for its (L, d)).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from fractions import Fraction

from theorycheck.arith.exact import INPUTS_KEYS
from theorycheck.errors import TheorycheckError
from theorycheck.proved.lemmas import LemmaBook, lemma_strengths, resting_strength
from theorycheck.record import Keys
from theorycheck.strength import KEYS as STRENGTH_KEYS
from theorycheck.strength import Strength, not_decided

__all__ = ["CertificateCheck", "CertificateError", "CertificateClaim", "RunChecker", "ball",
           "check_certificate_path", "claim_of", "digest", "exact_ball", "field_identity", "precision", "read_certificate",
           "serious", "MAX_BYTES", "MAX_NESTING", "EXTRA_ORDER", "MAX_DIM", "MAX_DEPTH_L", "PREC_RANGE", "ORDER_RANGE"]

#: the largest certificate read (bytes): a 30-digit certificate of d = 5 is a few MB
MAX_BYTES = 64 * 2**20
#: the deepest nesting of JSON arrays and objects read (a certificate needs 7)
MAX_NESTING = 32
#: the largest dimension d and depth L whose field the checker re-derives
MAX_DIM, MAX_DEPTH_L = 256, 100
#: the working precisions (bits) and Taylor orders a run may claim
PREC_RANGE, ORDER_RANGE = (16, 20_000), (1, 400)
#: the checker's second order: a step whose end does not hold the enclosure at its own order K is re-checked at
#: K + EXTRA_ORDER, where the remainder (bounded over the wide Picard image by another method than the integrator's)
#: is negligible beside the propagated width
EXTRA_ORDER = 4
#: the longest decimal string of a ball or an input
MAX_NUMBER_CHARS = 100_000


class CertificateError(TheorycheckError):
    """A certificate that cannot be read or is not of the expected shape (one line)."""


# ------------------------------------------------------------------ reading untrusted input
def _nesting(obj) -> int:
    """The deepest nesting of arrays and objects in a parsed JSON value (an iterative walk: no recursion)."""
    deepest, todo = 0, [(obj, 1)]
    while todo:
        v, depth = todo.pop()
        if isinstance(v, (list, dict)):
            deepest = max(deepest, depth)
            todo.extend((x, depth + 1) for x in (v.values() if isinstance(v, dict) else v))
    return deepest


def _constant(name: str):
    raise CertificateError(f"the certificate holds {name}: not a number a certificate writes")


def read_certificate(source, *, max_bytes: int = MAX_BYTES, max_nesting: int = MAX_NESTING) -> dict:
    """A certificate as a dict: ``source`` a dict (taken as it is) or a path to its JSON file, read with at most
    ``max_bytes`` bytes and ``max_nesting`` levels of nested arrays/objects (deeper than Python's JSON parser can
    go, or deeper than that bound, is refused). Anything else is a one-line :class:`CertificateError`."""
    if isinstance(source, dict):
        return source
    path = os.fspath(source)
    try:
        size = os.path.getsize(path)
        if size > max_bytes:
            raise CertificateError(f"{path}: {size} bytes, more than the {max_bytes} a certificate may have")
        with open(path, encoding="utf-8") as fh:
            text = fh.read(max_bytes + 1)
    except CertificateError:
        raise
    except UnicodeDecodeError:
        raise CertificateError(f"{path}: not UTF-8 text (a certificate is JSON)") from None
    except OSError as exc:
        raise CertificateError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    try:
        cert = json.loads(text, parse_constant=_constant)
    except RecursionError:
        raise CertificateError(f"{path}: JSON nested deeper than {max_nesting} levels (a certificate needs 7)") from None
    except ValueError as exc:
        raise CertificateError(f"{path}: not valid JSON ({str(exc).splitlines()[0][:200]})") from None
    if _nesting(cert) > max_nesting:
        raise CertificateError(f"{path}: JSON nested deeper than {max_nesting} levels (a certificate needs 7)")
    if not isinstance(cert, dict):
        raise CertificateError(f"{path}: a certificate is a JSON object, not {type(cert).__name__}")
    return cert


def check_certificate_path(path, name: str = "certificate"):
    """A certificate path checked before any proof work, by the one rule of every output
    (:data:`theorycheck.outputs.RULE`: missing folders on the way are created, the nearest existing one must be
    writable, nothing on the way may be a file, a folder is refused): one-line error naming ``name`` (a Python
    argument, or a flag such as ``--certificate``). Returns the path."""
    from theorycheck.outputs import output_file

    return output_file(path, name)


def digest(cert: dict) -> str:
    """sha256 of the certificate without its ``digest`` key: a check that the file arrived as written, no
    evidence (anyone can recompute it)."""
    body = {k: v for k, v in cert.items() if k != "digest"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def field_identity(fields) -> str:
    """sha256 of the sympy text (srepr) of a system's fields, one per line."""
    import sympy as sp

    return hashlib.sha256("\n".join(sp.srepr(e) for e in fields).encode()).hexdigest()


# ------------------------------------------------------------------ numbers
def _exact(text, what: str):
    from theorycheck.arith.exact import exact

    if not isinstance(text, str) or len(text) > MAX_NUMBER_CHARS:
        raise CertificateError(f"{what}: {str(text)[:40]!r} is not a decimal string")
    try:
        return exact(text, what)
    except TheorycheckError as exc:
        raise CertificateError(str(exc)) from None


def exact_ball(q: Fraction):
    """An Arb ball containing the rational q exactly, at the current precision."""
    from flint import arb, fmpq

    return arb(fmpq(q.numerator, q.denominator))


def ball(t, what: str = "ball"):
    """The ball a certificate writes as [decimal midpoint, decimal radius]: every point within radius of the
    midpoint, both read exactly (never through a float or Arb's own string parser)."""
    from flint import arb

    if not (isinstance(t, list) and len(t) == 2):
        raise CertificateError(f"{what}: a ball is [midpoint, radius] (two decimal strings)")
    mid, rad = _exact(t[0], what).value, _exact(t[1], what).value
    if rad < 0:
        raise CertificateError(f"{what}: negative radius")
    b = exact_ball(mid)
    return b if rad == 0 else b + arb(0, exact_ball(rad).upper())


@contextmanager
def precision(bits: int) -> Iterator[None]:
    """python-flint's working precision set to ``bits`` for a block (the checker's own; restored after)."""
    from flint import ctx

    old = ctx.prec
    try:
        ctx.prec = int(bits)
        yield
    finally:
        ctx.prec = old


# ------------------------------------------------------------------ the claim
@dataclass(frozen=True)
class CertificateClaim:
    """What a certificate claims, re-derived: for ℓ2-SAM at depth ``depth`` on the example ``z`` with ``rho``
    (exact rationals), α = ``lower`` collapses and α = ``upper`` grows, so α_c ∈ [lower, upper]; ``inputs``:
    the exact inputs as decimal strings (what the answer echoes)."""

    depth: int
    z: tuple
    rho: Fraction
    lower: Fraction
    upper: Fraction
    inputs: dict

    @property
    def d(self) -> int:
        return len(self.z)

    def z_balls(self) -> list:
        return [exact_ball(v) for v in self.z]

    def rho_ball(self):
        return exact_ball(self.rho)

    def alpha(self, run_index: int) -> Fraction:
        """The α run ``run_index`` must start at: lower (the collapse run), upper (the growth run)."""
        return self.lower if run_index == 0 else self.upper


#: the fate each run must prove, in order
FATES = ("collapse", "growth")


def claim_of(cert: dict, *, fmt: str, depth_of, fields_of, lemmas: dict) -> tuple[CertificateClaim | None, list[str]]:
    """The claim of ``cert`` re-derived from its inputs, and the failures (one line each) of every claim-level
    check (module docstring). ``fmt``: the format expected; ``depth_of(L)``: None when the format covers depth
    L, else why not; ``fields_of(L, d)``: the symbolic layer's fields for (L, d); ``lemmas``: fate → the lemma
    names a run of that fate may end in. None when the claim cannot be read at all."""
    fails: list[str] = []
    if cert.get("format") != fmt:
        old = str(cert.get("format", ""))[:80]
        why = " (written by an older theorycheck: prove the bracket again to write a new one)" if \
            old.rsplit("/", 1)[0] == fmt.rsplit("/", 1)[0] else ""
        return None, [f"format {old!r} is not {fmt}{why}"]
    try:
        claim = _inputs(cert, depth_of)
    except CertificateError as exc:
        return None, [f"inputs: {exc}"]
    fails += _system_checks(cert, claim, fields_of)
    fails += _bracket_checks(cert, claim)
    fails += _run_claims(cert, claim, lemmas)
    if cert.get("digest") != digest(cert):
        fails.append("digest: the certificate's digest does not match its data (changed after it was written; "
                     "the digest is no evidence, only a check that the file arrived as written)")
    return claim, fails


def _inputs(cert: dict, depth_of) -> CertificateClaim:
    inp = cert.get("inputs")
    if not isinstance(inp, dict):
        raise CertificateError("the certificate names no inputs (z, rho, depth)")
    z = inp.get("z")
    if not isinstance(z, list) or not z:
        raise CertificateError("z must be a non-empty list of decimal strings")
    if len(z) > MAX_DIM:
        raise CertificateError(f"d = {len(z)}: the checker re-derives fields up to d = {MAX_DIM}")
    zq = tuple(_exact(v, "z").value for v in z)
    rho = _exact(inp.get("rho"), "rho").value
    L = inp.get("depth")
    if not isinstance(L, int) or isinstance(L, bool) or not 2 <= L <= MAX_DEPTH_L:
        raise CertificateError(f"depth {str(L)[:20]!r} is not an integer in 2..{MAX_DEPTH_L}")
    if depth_of(L):
        raise CertificateError(depth_of(L))
    if any(v <= 0 for v in zq) or rho <= 0:
        raise CertificateError("a proved α_c is about z > 0 and ρ > 0")
    lo, hi = cert.get("lower"), cert.get("upper")
    lower = _exact(lo, "lower").value if lo is not None else Fraction(0)
    upper = _exact(hi, "upper").value if hi is not None else Fraction(0)
    from theorycheck.arith.exact import decimal_text

    echo = {"z": [decimal_text(v) for v in zq], "rho": decimal_text(rho), "depth": L}
    return CertificateClaim(L, zq, rho, lower, upper, echo)


def _system_checks(cert: dict, claim: CertificateClaim, fields_of) -> list[str]:
    import sympy as sp

    sysd = cert.get("system")
    if not isinstance(sysd, dict):
        return ["system: missing"]
    out = []
    if sysd.get("d") != claim.d:
        out.append(f"system: d = {str(sysd.get('d'))[:20]} but z has {claim.d} entries (d = len(z))")
    if "L" in sysd and sysd.get("L") != claim.depth:
        out.append(f"system: L = {str(sysd.get('L'))[:20]} but the inputs' depth is {claim.depth}")
    fields = fields_of(claim.depth, claim.d)
    if sysd.get("identity") != field_identity(fields) or sysd.get("fields") != [sp.srepr(e) for e in fields]:
        out.append(f"system: the field is not the one the symbolic layer derives for L = {claim.depth}, "
                   f"d = {claim.d} (identity differs)")
    return out


def _bracket_checks(cert: dict, claim: CertificateClaim) -> list[str]:
    if cert.get("lower") is None or cert.get("upper") is None:
        return ["bracket: an end is missing (both lower and upper are needed)"]
    if not 0 < claim.lower < claim.upper:
        return [f"bracket: [{cert['lower']}, {cert['upper']}] is not 0 < lower < upper"]
    return []


def _run_claims(cert: dict, claim: CertificateClaim, lemmas: dict) -> list[str]:
    runs = cert.get("runs")
    if not isinstance(runs, list) or len(runs) != 2:
        n = len(runs) if isinstance(runs, list) else 0
        return [f"runs: {n} run(s); a bracket needs exactly two: the collapse of lower, the growth of upper"]
    out = []
    for ri, (run, fate) in enumerate(zip(runs, FATES)):
        end = "lower" if ri == 0 else "upper"
        if not isinstance(run, dict):
            out.append(f"run {ri + 1}: not an object")
            continue
        if run.get("fate") != fate:
            out.append(f"run {ri + 1}: claims {str(run.get('fate'))[:40]}, the bracket's {end} end needs {fate}")
        try:
            a = _exact(run.get("alpha"), f"run {ri + 1} alpha").value
        except CertificateError as exc:
            out.append(str(exc))
        else:
            if a != claim.alpha(ri):
                out.append(f"run {ri + 1}: starts at α = {str(run.get('alpha'))[:60]}, not at the bracket's {end} "
                           f"end {cert.get(end)}")
        if run.get("lemma") not in lemmas[fate]:
            out.append(f"run {ri + 1}: ends in {str(run.get('lemma'))[:80]!r}, not a {fate} lemma "
                       f"({'; '.join(lemmas[fate])})")
        prec = run.get("prec")
        if not isinstance(prec, int) or isinstance(prec, bool) or not PREC_RANGE[0] <= prec <= PREC_RANGE[1]:
            out.append(f"run {ri + 1}: precision {str(prec)[:20]} is not an integer in {PREC_RANGE[0]}..{PREC_RANGE[1]}")
    return out


def order_of(step: dict, where: str) -> int:
    """A step's Taylor order, bounded (:data:`ORDER_RANGE`)."""
    K = step.get("order")
    if not isinstance(K, int) or isinstance(K, bool) or not ORDER_RANGE[0] <= K <= ORDER_RANGE[1]:
        raise CertificateError(f"{where}: order {str(K)[:20]} is not an integer in {ORDER_RANGE[0]}..{ORDER_RANGE[1]}")
    return K


def items(obj: dict, key: str, where: str) -> list:
    """``obj[key]`` as a list (a malformed certificate is a one-line :class:`CertificateError`)."""
    v = obj.get(key) if isinstance(obj, dict) else None
    if not isinstance(v, list):
        raise CertificateError(f"{where}: {key} must be a list")
    return v


# ------------------------------------------------------------------ the answer
@dataclass
class CertificateCheck:
    """The answer of a checker: ``ok`` when every claim-level check and every inclusion holds (the digest
    too); ``failures``: one line per failed check, naming the run, segment and step; ``steps`` re-checked;
    ``seconds``; the bracket ``lower``, ``upper`` and the exact ``inputs`` it is about; ``strength``: what an
    accepted certificate proves (proved when every lemma it rests on is proved for its (L, d), else the
    weakest lemma's strength; not decided when rejected)."""

    ok: bool
    failures: list = field(default_factory=list)
    steps: int = 0
    seconds: float = 0.0
    digest_ok: bool = True
    lower: str | None = None
    upper: str | None = None
    inputs: dict | None = None
    strength: Strength | None = None

    #: what ``theorycheck check-certificate --json`` prints (meanings: docs/commands/check-certificate.md)
    KEYS = Keys("check-certificate", "ok", "digest_ok", "failures", "steps", "seconds", "lower", "upper",
                inputs=INPUTS_KEYS, strength=STRENGTH_KEYS)

    def as_dict(self) -> dict:
        """``inputs``: the exact inputs checked (null when unreadable)."""
        strength = self.strength or not_decided("the certificate was rejected")
        return {"ok": self.ok, "digest_ok": self.digest_ok, "failures": list(self.failures), "steps": self.steps,
                "seconds": round(self.seconds, 3), "lower": self.lower, "upper": self.upper,
                "inputs": self.inputs, "strength": strength.as_dict()}


def answer(claim: CertificateClaim | None, fails: list[str], steps: int, seconds: float, cert: dict,
           lemmas: tuple[str, ...], book: LemmaBook | None) -> CertificateCheck:
    """The :class:`CertificateCheck` of a finished check: accepted when nothing failed, with the strength of the
    lemmas it rests on for its (L, d), in the pack's ``book``."""
    ok = claim is not None and not fails
    digest_ok = cert.get("digest") == digest(cert)
    strength = None
    if ok:
        strength = resting_strength(lemma_strengths(lemmas, depth=claim.depth, dim=claim.d, book=book))
    lower, upper = (cert.get(k) if isinstance(cert.get(k), str) else None for k in ("lower", "upper"))
    return CertificateCheck(ok, list(fails), steps, seconds, digest_ok, lower, upper,
                            claim.inputs if claim is not None else None, strength)


# ------------------------------------------------------------------ the one checker
class RunChecker:
    """What the checker of one certificate format brings (the checking side of a proved-fate system, code of its
    own): the format, the lemmas its brackets rest on and the lemma names a run may end in, the depths it covers,
    the symbolic layer's fields for (L, d), and the re-check of one run."""

    FORMAT: str
    LEMMAS: tuple
    LEMMA_NAMES: dict

    def depth_rule(self, L: int) -> str | None:
        """None when the format covers depth L, else why not."""
        raise NotImplementedError

    def fields(self, L: int, d: int):
        """The fields the symbolic layer derives for (L, d) (what the certificate's system must be)."""
        raise NotImplementedError

    def check_run(self, claim: CertificateClaim, ri: int, run: dict, fails: list, stop: bool) -> int:
        """Re-check every step of run ``ri`` and the lemma it names at its end (failures appended to ``fails``;
        ``stop``: return at the first serious failure). Returns the steps checked."""
        raise NotImplementedError


def serious(fails: list) -> bool:
    """A failure beside the digest's (which alone does not stop a check at its first failure)."""
    return any(not f.startswith("digest") for f in fails)
