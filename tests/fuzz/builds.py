"""The fuzz targets on both builds (issue 49): the same inputs through the compiled core and through the
pure-Python reference (KWIRE_PURE=1), each in a process of its own, their observations compared line by line.

A worker process (`python -m tests.fuzz.builds worker TARGET FILE`) reads length-prefixed inputs from FILE and
prints, for each, its index and `targets.observe`'s line, flushed. `compare` runs one worker per build: a
line that differs is a bug of the compiled build (the reference is the .py it was compiled from); a worker
that dies by a signal or hangs is a release blocker, and the input it was on is the one that killed it (the
worker starts again after it). Used by tests/fuzz/test_builds.py and scripts/fuzz_builds.py.
"""

from __future__ import annotations

import os
import random
import signal
import struct
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from kwire.compiled import PURE_ENV

ROOT = Path(__file__).resolve().parent.parent.parent
CORPUS = Path(__file__).resolve().parent / "corpus"
_LEN = struct.Struct(">I")


@dataclass
class Verdict:
    """What one target's inputs gave on both builds: inputs compared, differences, deaths and hangs."""

    target: str
    compared: int = 0
    differences: list = field(default_factory=list)  # (index, compiled line, pure line)
    deaths: list = field(default_factory=list)  # (index, build, what: "signal SIGSEGV" or "hang")

    @property
    def clean(self) -> bool:
        return not self.differences and not self.deaths

    def lines(self, inputs: list[bytes]) -> list[str]:
        out = [f"{self.target}: {self.compared} inputs, {len(self.differences)} differences, "
               f"{len(self.deaths)} deaths"]
        for index, compiled, pure in self.differences[:5]:
            out.append(f"  input {index} ({len(inputs[index])} bytes {inputs[index][:24].hex()}...): "
                       f"compiled {compiled[:160]} | pure {pure[:160]}")
        for index, build, what in self.deaths[:5]:
            out.append(f"  input {index} ({len(inputs[index])} bytes): {build} build {what}")
        return out


# ---- inputs ---------------------------------------------------------------------------------------------


def corpus_inputs(target: str) -> list[bytes]:
    """Inputs that once made kwire fail (tests/fuzz/corpus/<target>/), in name order."""
    folder = CORPUS / target
    return [p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()] if folder.is_dir() else []


def generated_inputs(target: str, count: int, seed: int) -> list[bytes]:
    """`count` inputs for the target from one seed: random bytes of every small length, mutations of the
    target's valid seeds (tests/fuzz/seeds.py), and for the pipeline conversations of valid random exchanges of
    every api, so the paths past the first check are reached too."""
    from tests.fuzz import seeds, targets

    rng = random.Random(f"{target}/{seed}")
    valid = seeds.seed_inputs(target) or [b""]
    out = []
    for i in range(count):
        if target == "pipeline" and i % 4 == 2:  # a fresh conversation of valid exchanges, whole or mutated
            whole = seeds.conversation(rng, rng.randrange(1, 6))
            out.append(whole if i % 8 == 2 else targets.mutate(whole, rng, rng.randrange(1, 4)))
        elif i % 2:
            out.append(rng.randbytes(rng.randrange(1, 600)))
        else:
            base = valid[i // 2 % len(valid)]
            out.append(targets.mutate(base, rng, rng.randrange(0, 6)) if i >= 2 * len(valid) else base)
    return out


# ---- workers ----------------------------------------------------------------------------------------------


def write_inputs(inputs: list[bytes], path: Path) -> None:
    with open(path, "wb") as f:
        for data in inputs:
            f.write(_LEN.pack(len(data)) + data)


def read_inputs(path: Path) -> list[bytes]:
    blob = path.read_bytes()
    out, pos = [], 0
    while pos + 4 <= len(blob):
        (n,) = _LEN.unpack_from(blob, pos)
        out.append(blob[pos + 4:pos + 4 + n])
        pos += 4 + n
    return out


def worker(target: str, path: Path, start: int) -> None:
    """Print `index line` for each input from `start` on, flushed, so the parent knows where a death fell."""
    from tests.fuzz import targets

    for index, data in enumerate(read_inputs(path)):
        if index >= start:
            sys.stdout.write(f"{index} {targets.observe(target, data)}\n")
            sys.stdout.flush()


def _run_build(target: str, path: Path, count: int, pure: bool, timeout: float) -> tuple[dict, list]:
    """Every input's line on one build; a death or hang is noted at its input and the worker started after it."""
    env = dict(os.environ, PYTHONHASHSEED="0", PYTHONPATH=str(ROOT))
    env.pop(PURE_ENV, None)
    if pure:
        env[PURE_ENV] = "1"
    build = "pure" if pure else "compiled"
    lines: dict[int, str] = {}
    deaths: list = []
    start = 0
    while start < count:
        argv = [sys.executable, "-m", "tests.fuzz.builds", "worker", target, str(path), str(start)]
        code = None
        try:
            done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=ROOT, timeout=timeout)
            out, code, what = done.stdout, done.returncode, None
            if code != 0:
                last = (done.stderr.strip().splitlines() or [""])[-1]
                what = f"signal {signal.Signals(-code).name}" if code < 0 else f"exit {code}: {last}"
        except subprocess.TimeoutExpired as exc:
            out = (exc.stdout or b"").decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
            what = f"hang past {timeout:.0f} s"
        for line in out.splitlines():
            index, _, text = line.partition(" ")
            if index.isdigit():
                lines[int(index)] = text
        reached = max([i for i in lines if i >= start], default=start - 1) + 1
        if what is None:
            break
        deaths.append((reached, build, what))
        if reached == start and code is not None and code > 0:  # it failed before its first input: not an input's
            break
        start = reached + 1
    return lines, deaths


def compare(target: str, inputs: list[bytes], timeout: float = 300.0) -> Verdict:
    """Run the inputs through both builds and say where they part."""
    verdict = Verdict(target, compared=len(inputs))
    with tempfile.TemporaryDirectory(prefix="kwire-builds-") as tmp:
        path = Path(tmp) / "inputs"
        write_inputs(inputs, path)
        compiled, compiled_deaths = _run_build(target, path, len(inputs), pure=False, timeout=timeout)
        pure, pure_deaths = _run_build(target, path, len(inputs), pure=True, timeout=timeout)
    verdict.deaths = compiled_deaths + pure_deaths
    dead = {index for index, _, _ in verdict.deaths}
    for index in range(len(inputs)):
        if index not in dead and compiled.get(index) != pure.get(index):
            verdict.differences.append((index, compiled.get(index, "(no line)"), pure.get(index, "(no line)")))
    return verdict


if __name__ == "__main__" and sys.argv[1:2] == ["worker"]:
    worker(sys.argv[2], Path(sys.argv[3]), int(sys.argv[4]))
