"""Every command is a thin shell over a documented library call: a module of ``theorycheck.cli`` imports, of the
library, only the API (``theorycheck.api``), the words of stage 0 and the validated setting of stage 1 (to read
the numbers typed exactly) — never a solver, a prover, a pack or an experiment directly."""

from __future__ import annotations

from test_stages import RANKS, imports, rank

#: the stages below the API a command may import from: words (0) and the setting (1)
BELOW = 1


def _bypasses(found) -> list[str]:
    bad = []
    for imp in found:
        if not imp.source.startswith("theorycheck.cli") or imp.target.startswith(("theorycheck.cli", "theorycheck.api")):
            continue
        r = rank(imp.target, RANKS)
        if r is None or r > BELOW:
            bad.append(f"{imp.where()}: {imp.source} imports {imp.target} (stage {r}), not through theorycheck.api")
    return bad


def test_commands_go_through_the_api():
    bad = _bypasses(imports())
    assert not bad, "\n".join(bad)


def test_the_rule_catches_a_bypass():
    from test_stages import Import

    fake = [Import("theorycheck.cli.commands.x", "theorycheck.proved.check", __import__("pathlib").Path(__file__), 1),
            Import("theorycheck.cli.commands.x", "theorycheck.api.calls", __import__("pathlib").Path(__file__), 2),
            Import("theorycheck.cli.commands.x", "theorycheck.errors", __import__("pathlib").Path(__file__), 3)]
    assert len(_bypasses(fake)) == 1


def test_every_command_calls_the_api():
    """Each command module (but the package's own __init__) names theorycheck.api."""
    names = {imp.source for imp in imports() if imp.source.startswith("theorycheck.cli.commands.")
             and imp.target.startswith("theorycheck.api")}
    from test_stages import modules

    commands = {m for m in modules() if m.startswith("theorycheck.cli.commands.")}
    assert commands - names == set(), sorted(commands - names)


def test_no_public_function_is_shadowed_by_a_subpackage():
    """``theorycheck.X`` cannot be both a function and a module: importing the module ``theorycheck.X``
    rebinds the package attribute to it (``tc.cnn`` was once the function, until ``theorycheck.cnn`` loaded)."""
    import pkgutil

    import theorycheck

    modules = {m.name for m in pkgutil.iter_modules(theorycheck.__path__)}
    functions = {name for name, (_, attr) in theorycheck._LAZY.items() if attr is not None}
    assert functions & modules == set()
