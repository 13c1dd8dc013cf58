"""A result that is a set of named values (thresholds, a max-margin solution, a setting's
summary, …): read it as attributes or items; :meth:`Record.as_dict` is what the CLI prints.

Every result class declares the keys its ``as_dict()`` may emit as a :class:`Keys` in its class
attribute ``KEYS`` (names only); the command's page in ``docs/commands/`` says what each means."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any


class Record:
    """Named values in a fixed order. ``r.key`` and ``r["key"]`` read a value; ``"key" in r``
    asks whether it is there; :meth:`as_dict` returns a copy of all of them (the JSON object
    of the CLI, before :func:`theorycheck.jsonio.to_plain`)."""

    __slots__ = ("_values",)

    def __init__(self, values: dict[str, Any]):
        object.__setattr__(self, "_values", dict(values))

    def as_dict(self) -> dict[str, Any]:
        return copy.deepcopy(self._values)

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    def __contains__(self, key: str) -> bool:
        return key in self._values

    def keys(self):
        return self._values.keys()

    def get(self, key: str, default: Any = None) -> Any:
        return self._values.get(key, default)

    def __getattr__(self, key: str) -> Any:
        try:
            return self._values[key]
        except KeyError:
            raise AttributeError(f"{type(self).__name__} has no value {key!r}; it has {', '.join(self._values)}") from None

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only")

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in list(self._values.items())[:6])
        more = ", …" if len(self._values) > 6 else ""
        return f"{type(self).__name__}({shown}{more})"


# ---------------------------------------------------------------------------- declared keys
class Keys:
    """The keys of one JSON object that a result prints: the names only. What each key means, its
    type and its unit are written once, on the command's page in ``docs/commands/``, in the table
    that follows the line ``<!-- keys: NAME -->`` (``tests/test_docs_keys.py`` holds the page to
    this declaration, and the declaration to what ``as_dict()`` emits on sample runs).

    ``Keys(name, *keys, **nested)``: ``keys`` are leaves (any value: a number, a string, a list of
    numbers, or an object keyed by data such as derive's ``equations``); ``nested`` gives the keys
    whose value is an object of known keys (a :class:`Keys`), a list of such objects
    (:class:`ListOf`), an object keyed by data whose values are such objects (:class:`MapOf`) or
    one of several shapes (:class:`OneOf`). A key whose name is not a Python identifier goes in
    through :meth:`nest`. ``name`` is unique across the project: the page's table names it."""

    __slots__ = ("name", "keys", "nested")

    def __init__(self, name: str, *keys: str, **nested: Any):
        self.name = name
        self.nested: dict[str, Any] = {}
        self.keys: tuple[str, ...] = tuple(dict.fromkeys(keys))
        self.nest(nested)

    def nest(self, nested: dict[str, Any]) -> Keys:
        """Add keys whose values have known keys (also a schema that contains itself: a claim's
        ``refined`` is a claim); returns ``self``."""
        for key, shape in nested.items():
            if not isinstance(shape, (Keys, ListOf, MapOf, OneOf)):
                raise TypeError(f"{self.name}.{key}: a nested shape is Keys, ListOf, MapOf or OneOf, not {shape!r}")
            self.nested[key] = shape
        self.keys = tuple(dict.fromkeys([*self.keys, *nested]))
        return self

    def __contains__(self, key: str) -> bool:
        return key in self.keys

    def __repr__(self) -> str:
        return f"Keys({self.name!r}: {', '.join(self.keys)})"

    def schemas(self) -> dict[str, Keys]:
        """Every object schema reachable from this one (itself included), by name."""
        found: dict[str, Keys] = {}
        todo: list[Keys] = [self]
        while todo:
            k = todo.pop()
            if k.name in found:
                if found[k.name] is not k:
                    raise ValueError(f"two different schemas are named {k.name!r}")
                continue
            found[k.name] = k
            for shape in k.nested.values():
                todo.extend(_objects(shape))
        return found

    def walk(self, value: Any) -> tuple[list[str], set[tuple[str, str]]]:
        """Compare ``value`` (an ``as_dict()``, or JSON read back) with this declaration: the paths
        of keys it has and the declaration lacks (``a.b[].c``: key ``c`` of an item of list ``b``),
        and the (schema name, key) pairs it emits (to see, over many runs, which declared keys
        none of them emitted)."""
        undeclared: list[str] = []
        emitted: set[tuple[str, str]] = set()
        for path, schema, key, _ in self.visit(value):
            if schema is None:
                undeclared.append(path)
            else:
                emitted.add((schema.name, key))
        return undeclared, emitted

    def visit(self, value: Any, path: str = "") -> Iterator[tuple[str, Keys | None, str, Any]]:
        """Every key of ``value`` as (path, the schema that declares it or None, key, its value),
        descending into the nested objects this declaration knows."""
        yield from _visit(self, value, path)


class ListOf:
    """A list whose items are objects of ``keys`` (a :class:`Keys` or a :class:`OneOf`; a null item
    is allowed)."""

    __slots__ = ("keys",)

    def __init__(self, keys: Keys | OneOf):
        self.keys = keys


class MapOf:
    """An object keyed by data (an optimizer's name, a claim's key) whose values are objects of ``keys``."""

    __slots__ = ("keys",)

    def __init__(self, keys: Keys | OneOf):
        self.keys = keys


class OneOf:
    """An object of one of several shapes (e.g. the certificate of α_c at L = 2 or at depth L): a
    value is compared with the shape that declares the most of its keys (the smallest on a tie)."""

    __slots__ = ("shapes",)

    def __init__(self, *shapes: Keys):
        if len(shapes) < 2 or not all(isinstance(s, Keys) for s in shapes):
            raise TypeError("OneOf takes two or more Keys")
        self.shapes = shapes


def _objects(shape: Any) -> list[Keys]:
    if isinstance(shape, Keys):
        return [shape]
    if isinstance(shape, (ListOf, MapOf)):
        return _objects(shape.keys)
    return list(shape.shapes)


def _visit(shape: Any, value: Any, path: str) -> Iterator[tuple[str, Keys | None, str, Any]]:
    if isinstance(shape, ListOf):
        if isinstance(value, (list, tuple)):
            for item in value:
                yield from _visit(shape.keys, item, f"{path}[]")
        return
    if not isinstance(value, dict):  # null, or a leaf where an object may stand
        return
    if isinstance(shape, MapOf):
        for item in value.values():
            yield from _visit(shape.keys, item, f"{path}{{}}")
        return
    if isinstance(shape, OneOf):
        shape = min(shape.shapes, key=lambda s: (sum(k not in s for k in value), len(s.keys)))
    for key, item in value.items():
        where = f"{path}.{key}" if path else str(key)
        if key not in shape:
            yield where, None, key, item
            continue
        yield where, shape, key, item
        if key in shape.nested:
            yield from _visit(shape.nested[key], item, where)
