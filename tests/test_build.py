"""The build (setup.py, pyproject.toml): the profile-guided build runs kwire itself while it builds, in
pip's isolated build environment, so that environment must hold every dependency kwire imports; and it
trains on the bundled captures, so there must be some, of the kinds it looks for."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _names(requirements: list[str]) -> dict[str, str]:
    return {re.split(r"[<>=!~ ;\[]", r, maxsplit=1)[0].lower().replace("_", "-"): r for r in requirements}


def test_build_requires_every_dependency_at_the_same_bound():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    build = _names(config["build-system"]["requires"])
    for name, requirement in _names(config["project"]["dependencies"]).items():
        assert build.get(name) == requirement, f"[build-system] requires lacks {requirement!r} (the training run)"


def test_training_captures_are_bundled():
    captures = [p for p in (ROOT / "captures").rglob("*") if p.suffix in (".pcap", ".pcapng")]
    assert len(captures) >= 10
    setup = (ROOT / "setup.py").read_text(encoding="utf-8")
    assert 'p.endswith((".pcap", ".pcapng"))' in setup  # the training run's choice of files: the same kinds
