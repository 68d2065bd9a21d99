#!/usr/bin/env python3
"""atheris harness: the 'times' target of tests/fuzz/targets.py (see scripts/fuzz_common.py)."""

from fuzz_common import main

if __name__ == "__main__":
    main("times")
