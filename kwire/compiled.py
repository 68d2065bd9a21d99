"""The compiled core: which of kwire's modules setup.py compiles, and which compiled module runs.

kwire is pure Python. Where a C compiler is there at `pip install`, setup.py also compiles the
modules of the per-packet, per-frame and per-exchange path (CORE below) with Cython, as they are:
the same .py files, no second source. A compiled module (kwire/native/tcp_flows.cpython-311-...so) sits
beside its .py, and Python's import would always take it; this module decides instead:

- the compiled module runs only when it was built from the .py beside it: setup.py writes the
  SHA-256 of each source it compiled into SOURCES_FILE (`source_digest`: with the Cython declarations
  of a module that has them, its .pxd and those it cimports, and those modules' .py), and a module
  whose source changed since (an edit in an editable install, a checkout of another commit) runs
  from its .py;
- KWIRE_PURE=1 in the environment makes every module run from its .py, so one installation can be
  compared with itself (tests/test_compiled.py: byte-identical output on every committed capture).

`install()` (called by kwire/__init__.py, before any other kwire module is imported) puts the
finder in front of Python's; `report()` says what runs compiled (`kwire --version`).
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import re
import sys

# The modules compiled, relative to the repository root (setup.py reads this tuple): where many-small traffic
# spends its time per packet and per exchange (cProfile of stats and inspect --json), not every module: each
# one costs about 2 s of the machine's compiler at install, and a module that runs once per capture gains nothing.
# A module whose compiled form saves no measurable work (callgrind of each run as Python alone, docs/speed.md:
# kwire/fields.py, kwire/native/codec_records_legacy.py, kwire/codec/compiler.py: start-up alone) stays plain Python:
# each costs install time, and each one outside kwire/native is native code outside the place it is to live (issue 44,
# docs/internals.md); where a plain module's function was the hot part, it moved in (kwire.outcomes' is_malformed is
# kwire.native.exchange_build's).
CORE = (
    "kwire/native/fused.py", "kwire/native/exchange_build.py", "kwire/native/exchange_enrich.py",
    "kwire/native/exchange_sink.py", "kwire/native/exchange_wire.py", "kwire/native/exchange_facts.py",
    "kwire/native/exchange_produce.py", "kwire/native/exchange_row.py", "kwire/native/exchange_errors.py",
    "kwire/model.py",
    "kwire/native/net_decode.py", "kwire/native/net_layers.py", "kwire/native/net_tunnels.py",
    "kwire/native/tcp_flows.py", "kwire/native/tcp_outoforder.py", "kwire/native/tcp_reassembly.py",
    "kwire/native/kafka_connection.py", "kwire/native/kafka_headers.py", "kwire/native/kafka_pairing.py",
    "kwire/native/kafka_resync.py", "kwire/native/kafka_roles.py",
    "kwire/native/codec_budget.py", "kwire/native/codec_records.py", "kwire/native/codec_records_v2.py",
    "kwire/native/batch_json.py", "kwire/native/distribution.py", "kwire/native/framing.py",
    "kwire/native/json_line.py", "kwire/native/raw_records.py", "kwire/native/record_walk.py",
    "kwire/native/time_queue.py", "kwire/native/caps.py", "kwire/native/mergeable.py", "kwire/native/series.py",
    "kwire/analytics/aggregate.py", "kwire/analytics/analysis.py", "kwire/analytics/delivery.py",
    "kwire/analytics/figures.py", "kwire/analytics/findings_delivery.py", "kwire/analytics/observe.py",
    "kwire/analytics/read.py", "kwire/analytics/resend_state.py", "kwire/analytics/resends.py",
    "kwire/analytics/traffic.py",
)
SOURCES_FILE = "compiled-sources.txt"  # in the kwire package folder: "<module> <source_digest>" lines
PURE_ENV = "KWIRE_PURE"

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


# what a .pxd cimports of kwire: `from kwire.x cimport ...` or `cimport kwire.x`
_CIMPORT = re.compile(rb"^[ \t]*(?:from[ \t]+(kwire(?:\.\w+)*)[ \t]+cimport|cimport[ \t]+(kwire(?:\.\w+)*))", re.M)


def source_digest(path: str, memo: dict | None = None) -> str:
    """The SHA-256 a compiled module is checked against: of its .py alone when it has no Cython declarations
    (a .pxd beside it), else of every file its compiled form depends on: its .py and .pxd, and the .py and .pxd
    of each kwire module those declarations cimport, recursively (a compiled module that reads another one's
    fields in C must not run beside a changed or uncompiled version of it), as each file's path under the root
    and the SHA-256 of its bytes. The same digest however `path` is spelled (relative or absolute: the files are
    ordered by their absolute paths). `memo` (the import finder's: one per process) keeps what was found of each
    file and .pxd, so that each is read and hashed once: the modules' dependencies overlap, and hashing them again
    for every module cost each start of kwire 1.6 MB of SHA-256 (0.6 MB distinct): about 63 M instructions
    (callgrind, docs/speed.md)."""
    if memo is None:
        memo = {}
    path = os.path.abspath(path)
    pxd = path[:-3] + ".pxd"
    if not os.path.exists(pxd):
        digest = _file_digest(path, memo)
        if digest is None:
            raise FileNotFoundError(path)
        return digest
    root = _root_of(path)
    combined = hashlib.sha256()
    for module in _depends_on(pxd, root, memo):
        for name in (module + ".py", module + ".pxd"):
            digest = _file_digest(name, memo)
            if digest is not None:
                combined.update(os.path.relpath(name, root).replace(os.sep, "/").encode() + b"\0" + digest.encode())
    return combined.hexdigest()


def _file_digest(path: str, memo: dict) -> str | None:
    """The SHA-256 of a file's bytes (None when it cannot be read), once for each `memo`."""
    return _read(path, memo)[0]


def _read(path: str, memo: dict) -> tuple[str | None, list[bytes]]:
    """A file read once for each `memo`: the SHA-256 of its bytes (None when it cannot be read) and, of a .pxd,
    the dotted names of the kwire modules it cimports."""
    if path not in memo:
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            memo[path] = (None, [])
        else:
            names = [m.group(1) or m.group(2) for m in _CIMPORT.finditer(data)] if path.endswith(".pxd") else []
            memo[path] = (hashlib.sha256(data).hexdigest(), names)
    return memo[path]


def _root_of(path: str) -> str:
    """The folder that holds the kwire package `path` lies in."""
    parts = os.path.abspath(path).split(os.sep)
    return os.sep.join(parts[:len(parts) - 1 - parts[::-1].index("kwire")]) or os.sep


def _depends_on(pxd: str, root: str, memo: dict | None = None) -> list[str]:
    """The modules (paths without extension) whose .pxd files `pxd` cimports, recursively, and its own; sorted
    (each .pxd read once for each `memo`)."""
    if memo is None:
        memo = {}
    found = {pxd[:-4]}
    todo = [pxd]
    while todo:
        for module in _cimports_of(todo.pop(), root, memo):
            if module not in found:
                found.add(module)
                todo.append(module + ".pxd")
    return sorted(found)


def _cimports_of(pxd: str, root: str, memo: dict) -> list[str]:
    """The modules one .pxd cimports (paths without extension); none when it cannot be read."""
    return [os.path.join(root, *name.decode().split(".")) for name in _read(pxd, memo)[1]]


def _built_from() -> dict[str, str]:
    """module name -> the SHA-256 of the source its compiled module was built from."""
    try:
        with open(os.path.join(_PACKAGE_DIR, SOURCES_FILE), encoding="ascii") as f:
            return dict(line.split() for line in f if line.strip())
    except (OSError, ValueError):
        return {}


class SourceWhereNewer(importlib.abc.MetaPathFinder):
    """For kwire's modules: the compiled module when it was built from today's .py, else the .py."""

    def __init__(self, pure: bool):
        self.pure = pure
        self.built_from = {} if pure else _built_from()
        self.memo: dict = {}  # source_digest's: each source file read and hashed once

    def find_spec(self, name, path, target=None):
        if not name.startswith("kwire."):
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if spec is None or not isinstance(spec.loader, importlib.machinery.ExtensionFileLoader):
            return spec
        source = os.path.join(os.path.dirname(spec.origin), name.rpartition(".")[2] + ".py")
        if not os.path.exists(source):
            return spec
        if not self.pure and self.built_from.get(name) == source_digest(source, self.memo):
            return spec
        return importlib.util.spec_from_file_location(name, source)


_finder: SourceWhereNewer | None = None


def install() -> None:
    """Put the finder first on sys.meta_path (once)."""
    global _finder
    if _finder is None:
        _finder = SourceWhereNewer(os.environ.get(PURE_ENV, "") not in ("", "0"))
        sys.meta_path.insert(0, _finder)


def report() -> str:
    """One line on what runs compiled, e.g. for `kwire --version`."""
    if _finder is not None and _finder.pure:
        return f"pure Python ({PURE_ENV} is set)"
    built = _built_from()
    if not built:
        return "pure Python (no compiled core: no C compiler at install, or KWIRE_BUILD=pure)"
    memo: dict = {}
    changed = sorted(name for name, digest in built.items() if _source_digest_of(name, memo) != digest)
    line = f"compiled core: {len(built) - len(changed)} of {len(built)} modules"
    if changed:
        shown = ", ".join(changed[:3]) + (", ..." if len(changed) > 3 else "")
        line += f" ({len(changed)} changed since the build run from source: {shown}; pip install -e . rebuilds)"
    return line


def _source_digest_of(name: str, memo: dict | None = None) -> str | None:
    path = os.path.join(os.path.dirname(_PACKAGE_DIR), *name.split(".")) + ".py"
    try:
        return source_digest(path, memo)
    except OSError:
        return None
