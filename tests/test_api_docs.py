"""docs/api.md cannot drift: every function or class it documents under a ``### `name(…)```
heading has exactly that signature (parameter names, kinds, defaults, return annotation), as
``inspect.signature`` reads it from the code."""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

import pytest

import theorycheck as tc

DOC = Path(__file__).resolve().parents[1] / "docs" / "api.md"
HEADING = re.compile(r"^#{2,3} `([\w.]+)\((.*)\)(?: -> ([^`]+))?`", re.M)


def _resolve(name: str):
    if "." not in name:
        return getattr(tc, name)
    mod, _, attr = name.rpartition(".")
    try:
        return getattr(importlib.import_module(mod), attr)
    except ImportError:  # Class.method
        owner_mod, _, owner = mod.rpartition(".")
        return getattr(getattr(importlib.import_module(owner_mod), owner), attr)


def _default(v) -> str:
    return f'"{v}"' if isinstance(v, str) else repr(v)


def rendered(obj) -> tuple[str, str | None]:
    """``name, …`` as docs/api.md writes a signature, and the return annotation (or None)."""
    sig = inspect.signature(obj)
    parts, star = [], False
    for p in sig.parameters.values():
        if p.name == "self":
            continue
        if p.kind is p.KEYWORD_ONLY and not star:
            parts.append("*")
            star = True
        if p.kind is p.VAR_POSITIONAL:
            parts.append(f"*{p.name}")
            star = True
        elif p.kind is p.VAR_KEYWORD:
            parts.append(f"**{p.name}")
        else:
            parts.append(p.name if p.default is p.empty else f"{p.name}={_default(p.default)}")
    ret = sig.return_annotation
    ret = None if ret is sig.empty or inspect.isclass(obj) else (ret if isinstance(ret, str) else ret.__name__)
    return ", ".join(parts), ret


def documented() -> list[tuple[str, str, str | None]]:
    return [(m.group(1), m.group(2), m.group(3)) for m in HEADING.finditer(DOC.read_text(encoding="utf-8"))]


def test_the_doc_documents_the_public_functions():
    names = {n for n, _, _ in documented()}
    for public in ("Setting", "solve", "thresholds", "heatmap", "verify", "prove", "max_margin", "derive",
                   "describe", "reproduce", "run_claim", "register_claim", "unregister_claim"):
        assert public in names, public


@pytest.mark.parametrize("name, params, ret", documented(), ids=[n for n, _, _ in documented()])
def test_documented_signature_is_the_code(name, params, ret):
    want_params, want_ret = rendered(_resolve(name))
    assert " ".join(params.split()) == want_params, name
    assert (ret.strip() if ret else None) == want_ret, name


def test_every_public_function_has_a_return_annotation():
    for name in tc.__all__:
        obj = getattr(tc, name)
        if inspect.isfunction(obj):
            assert inspect.signature(obj).return_annotation is not inspect.Signature.empty, name
