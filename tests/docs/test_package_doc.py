"""kwire/__init__.py's docstring states the layer order; it must be the order pyproject.toml's
import-linter contract enforces (the contract lists the layers highest first, the docstring lowest first)."""

from __future__ import annotations

import re
import tomllib

import kwire
from tests.docs.pages import ROOT


def _contract_layers() -> list[set[str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contract = next(c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers")
    return [{name.strip().removeprefix("kwire.") for name in layer.split("|")} for layer in reversed(contract["layers"])]


def _docstring_layers() -> list[set[str]]:
    chain = re.search(r"^capture -> .*?(?:\n\n|\Z)", kwire.__doc__, re.S | re.M)
    assert chain, "kwire/__init__.py's docstring has no layer chain starting at capture"
    return [{name.strip() for name in layer.split("|")} for layer in " ".join(chain.group(0).split()).split("->")]


def test_package_docstring_states_the_enforced_layers():
    assert _docstring_layers() == _contract_layers()
