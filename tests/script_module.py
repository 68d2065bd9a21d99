"""A script of scripts/ imported as a module, for the tests that call its functions (scripts/ is not a package)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def script_module(name: str) -> ModuleType:
    """scripts/NAME.py, run once and kept in sys.modules under NAME (a second call gives the same module)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
