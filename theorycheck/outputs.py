"""Where results are written: one rule for every output path (a figure, a JSON file, a saved
sweep's prefix, an output folder), used by the library and, with its option names, by the CLI.

The rule (:data:`RULE`): an output is written where it is named, and missing folders on the
way are created — checked before any work starts: the nearest existing folder must be
writable (a file is created and removed there to find out) and nothing on the way may be a
file; an existing output file must open for writing. A folder given where a file or a prefix is
expected is refused with an example of what to give; so is a figure name whose suffix
matplotlib does not write. Plain Python (no numpy), so every stage can use it.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from theorycheck.errors import ArgumentError, TheorycheckError

__all__ = ["RULE", "FIGURE_SUFFIXES", "PREFIX_SUFFIXES", "output_file", "output_prefix", "output_folder",
           "make_parent"]

RULE = ("an output is written where it is named; missing folders on the way are created (the nearest existing "
        "one must be writable); a folder is refused where a file or a prefix is expected")

#: figure formats matplotlib writes here
FIGURE_SUFFIXES = (".png", ".svg", ".pdf")
#: the files a saved sweep's prefix names
PREFIX_SUFFIXES = (".npz", ".json")


def _shown(path) -> str:
    text = str(path)
    return text if len(text) <= 120 else text[:120] + "…"


def _error(name: str, shown: str, problem: str) -> TheorycheckError:
    """The one-line error: a command-line option (``--out``) is written ``--out PATH: …``; a
    library argument (``path``) ``path='PATH': …``, an :class:`ArgumentError` naming it (the CLI
    renders it as its own flag)."""
    if name.startswith("-"):
        return TheorycheckError(f"{name} {shown}: {problem}")
    return ArgumentError(f"{name}={shown!r}: {problem}", name)


def _names_a_folder(text: str) -> bool:
    """``text`` ends in a path separator or names an existing folder."""
    if text.endswith(("/", os.sep)) or text in (".", ".."):
        return True
    try:
        return Path(text).is_dir()
    except (OSError, ValueError):
        return False


def _check_ancestors(p: Path, name: str, shown: str) -> None:
    """The folder ``p`` goes into exists and is writable, or can be created: its nearest
    existing ancestor is a writable folder (never a file), tried by creating and removing a
    file in it (permission bits say nothing for root, nor on a read-only or virtual file
    system such as /proc, where the write failed after the work)."""
    q = p.parent if str(p.parent) else Path(".")
    while not q.exists():
        if q.parent == q:
            break
        q = q.parent
    if not q.is_dir():
        raise _error(name, shown, f"{str(q)!r} is a file, not a folder")
    if not os.access(q, os.W_OK | os.X_OK):
        raise _error(name, shown, f"folder {str(q)!r} is not writable")
    try:
        fd, probe = tempfile.mkstemp(prefix=".theorycheck-probe-", dir=q)
    except OSError as exc:
        raise _error(name, shown, f"folder {str(q)!r} is not writable ({exc.strerror or exc})") from None
    os.close(fd)
    try:
        os.unlink(probe)
    except OSError:  # pragma: no cover - a file we just created
        pass


def _check_writable_file(p: Path, name: str, shown: str) -> None:
    """An existing output file can be opened for writing (opened to append, nothing written)."""
    try:
        with open(p, "ab"):
            pass
    except OSError as exc:
        raise _error(name, shown, f"the file exists and cannot be written ({exc.strerror or exc})") from None


def _guard(fn, path, name: str, *args):
    if path is None:
        raise _error(name, "None", "give a path")
    text = os.fspath(path)
    if "\x00" in text:
        raise _error(name, "…", "a path cannot contain a NUL character")
    if not text.strip():
        raise _error(name, "", "the path is empty")
    try:
        return fn(text, name, *args)
    except OSError as exc:  # e.g. a name too long for the file system
        raise _error(name, _shown(text), f"not a usable path ({exc.strerror or exc})") from None


def output_file(path: str | os.PathLike, name: str = "path", *,
                suffixes: tuple[str, ...] | None = None) -> Path:
    """``path`` as a Path after checking it as an output file (see :data:`RULE`); with
    ``suffixes`` (e.g. :data:`FIGURE_SUFFIXES`) its suffix must be one of them."""
    return _guard(_output_file, path, name, suffixes)


def _output_file(text: str, name: str, suffixes) -> Path:
    shown = _shown(text)
    if _names_a_folder(text):
        example = f"{text.rstrip('/' + os.sep) or '.'}/result{suffixes[0] if suffixes else '.json'}"
        raise _error(name, shown, f"is a folder; give a file name in it, e.g. {example}")
    p = Path(text)
    if suffixes is not None and p.suffix.lower() not in suffixes:
        raise _error(name, shown, f"the suffix picks the format; end the name with "
                               f"{', '.join(suffixes)}")
    _check_ancestors(p, name, shown)
    if p.exists() and not os.access(p, os.W_OK):
        raise _error(name, shown, "the file exists and is not writable")
    if p.exists():
        _check_writable_file(p, name, shown)
    return p


def output_prefix(prefix: str | os.PathLike, name: str = "prefix") -> tuple[Path, Path]:
    """The two files PREFIX.npz and PREFIX.json a saved sweep writes (a trailing .npz or
    .json is dropped; other dots are kept), after checking them (see :data:`RULE`)."""
    return _guard(_output_prefix, prefix, name)


def _output_prefix(text: str, name: str) -> tuple[Path, Path]:
    shown = _shown(text)
    base = text
    for suf in PREFIX_SUFFIXES:
        if base.endswith(suf):
            base = base[: -len(suf)]
    if _names_a_folder(text) or _names_a_folder(base) or base.endswith(("/", os.sep)) or not base \
            or not Path(base).name:
        folder = text.rstrip("/" + os.sep)
        folder = folder if folder and not folder.endswith(PREFIX_SUFFIXES) else (str(Path(base)) or ".")
        raise _error(name, shown, f"names a folder, not a prefix; give a prefix in it, e.g. "
                               f"{folder}/run (writes {folder}/run.npz and {folder}/run.json)")
    files = (Path(base + ".npz"), Path(base + ".json"))
    for f in files:
        if f.is_dir():
            raise _error(name, shown, f"{str(f)!r} is a folder; choose another prefix")
        _check_ancestors(f, name, shown)
        if f.exists() and not os.access(f, os.W_OK):
            raise _error(name, shown, f"{str(f)!r} exists and is not writable")
        if f.exists():
            _check_writable_file(f, name, shown)
    return files


def output_folder(path: str | os.PathLike, name: str = "out") -> Path:
    """``path`` as a Path after checking it as an output folder (see :data:`RULE`): an
    existing folder, or one that can be created."""
    return _guard(_output_folder, path, name)


def _output_folder(text: str, name: str) -> Path:
    shown = _shown(text)
    p = Path(text)
    if p.exists() and not p.is_dir():
        raise _error(name, shown, "is a file; give a folder (it is created when missing)")
    _check_ancestors(p / "x", name, shown)  # an existing folder is its own nearest ancestor
    return p


def make_parent(path: Path, name: str = "path") -> Path:
    """Create the folders ``path`` goes into (the rule's "missing folders are created")."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _error(name, _shown(path), f"cannot create folder {str(path.parent)!r} "
                     f"({exc.strerror or exc})") from None
    return path
