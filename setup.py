"""Packages: ``theorycheck`` and the packs' two folders, ``proofs/`` and ``numerics/``, installed as
``theorycheck.proofs`` and ``theorycheck.numerics`` (every subfolder with an ``__init__.py`` is found,
so a new pack needs no line here). The rest of the metadata is in pyproject.toml."""

from setuptools import find_packages, setup


def mapped(folder: str, name: str) -> list[str]:
    return [name] + [f"{name}.{p}" for p in find_packages(folder)]


setup(
    packages=find_packages(include=["theorycheck", "theorycheck.*"])
    + mapped("proofs", "theorycheck.proofs") + mapped("numerics", "theorycheck.numerics"),
    package_dir={"theorycheck.proofs": "proofs", "theorycheck.numerics": "numerics"},
)
