"""Replay every input under tests/fuzz/corpus/<target>/ through its fuzz target (tests/fuzz/targets.py).

The corpus holds inputs that once made kwire fail (found by the atheris harnesses scripts/fuzz_*.py or
by the hypothesis tests): each must now pass its target. See corpus/README.md for how to add one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fuzz import targets

CORPUS = Path(__file__).resolve().parent / "corpus"
INPUTS = sorted(p for p in CORPUS.glob("*/*") if p.is_file() and p.parent.name in targets.TARGETS)


def test_corpus_folders_name_targets():
    for folder in CORPUS.iterdir():
        if folder.is_dir():
            assert folder.name in targets.TARGETS, f"{folder} is not a fuzz target"


@pytest.mark.parametrize("path", INPUTS, ids=[f"{p.parent.name}/{p.name}" for p in INPUTS])
def test_corpus_input_passes(path):
    targets.run(path.parent.name, path.read_bytes())
