"""A capture kwire fails on, left out and named, so that the other captures' figures are kept.

A fault is an exception kwire did not raise on purpose (kwire.errors.is_fault): a bug of kwire's that
some input meets. `kwire stats` over several files, or `kwire spark`, that meets one does not end in
a traceback with every figure lost:

- `without_faulty(paths, run, first)`: `run(paths)` failed with the fault `first`; each file is run
  alone (`run([path])`, its outputs made and thrown away) to find the files it fails on, then the
  others together. Returns that run's result and one line per file left out (`left_out`), which the
  command reports as capture errors (exit status 1). A file whose run alone ends in a KwireError is not
  a fault: the run over the others reports it as it always does (not a capture, damaged).
- When no file fails alone (the fault needs them together), or only one file was given, the fault is
  the run's one-line error: `kwire: error: kwire failed on FILE (TypeError: ... (kwire/....py:329))`.

Nothing costs more until a fault: then each file is read once more, alone, and the others once more.
"""

from __future__ import annotations

from kwire.errors import KwireError, fault_line, is_fault
from kwire.safe_text import term_safe


def left_out(path: str, line: str) -> str:
    return f"{term_safe(path)}: left out: kwire failed on it ({line})"


def faulty_files(paths: list[str], run) -> dict[str, str]:
    """The files `run([path])` fails on with a fault, each with its fault's line."""
    found = {}
    for path in paths:
        try:
            run([path])
        except Exception as exc:  # noqa: BLE001 - faults are what is looked for; the rest is not this file's
            if is_fault(exc):
                found[path] = fault_line(exc)
    return found


def without_faulty(paths: list[str], run, first: BaseException):
    """(run over the files it does not fail on, the lines naming the others); KwireError when there is
    no such file, or no other."""
    if len(paths) < 2:
        raise KwireError(f"kwire failed on {term_safe(', '.join(paths))} ({fault_line(first)})") from None
    faulty = faulty_files(paths, run)
    if not faulty:
        raise KwireError(f"kwire failed on these files together, on none alone ({fault_line(first)})") from None
    good = [path for path in paths if path not in faulty]
    if not good:
        raise KwireError("; ".join(left_out(path, line) for path, line in faulty.items())) from None
    return run(good), [left_out(path, line) for path, line in faulty.items()]
