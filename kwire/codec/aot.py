"""The decoders compiled ahead of time: which of them may run in place of the generated source.

kwire.codec.compiler generates each decoder's Python source at run time and executes it. For the messages
most traffic is made of (HOT below: the data path and the heartbeats, in the versions clients speak),
`pip install .` also compiles that source with Cython (setup.py, through kwire.codec.aot_build, which inlines its
blocks and makes its reads of the body C reads), into extension modules, kwire.native._aot_<api key>_<request|
response> (MODULES: generated, they are native code's and live in kwire/native), where C integers hold the offsets and lengths. Each compiled decoder is recorded with the
SHA-256 of the source it was made from (and of how it was compiled: source_digest), and `compiled_decoder`
hands it out only while the generator still makes that very source: a changed schema, generator or bound runs
the generated source as before, so the compiled decoders can never decode differently from the source kwire
would run.

KWIRE_PURE=1 (kwire.compiled) turns them off with the rest of the compiled core. `report()` counts them
for `kwire --version`.
"""

from __future__ import annotations

import importlib
import os

from kwire.kafka.apis import APIS

try:  # the builtin sha256: importing hashlib loads OpenSSL (kwire.codec.code_cache)
    from _sha256 import sha256
except ImportError:  # pragma: no cover - Python 3.12+
    try:
        from _sha2 import sha256
    except ImportError:
        from hashlib import sha256

# (api key, first version, last version): both the request and the response, every version in between that the
# schema has. Chosen for where exchanges are many and small (Produce, Fetch, the share group's fetches and
# acknowledgements, every kind of heartbeat), from the versions clients speak today (v3+ Produce and v4+ Fetch:
# record batches v2); each decoder costs about a second of the machine's compiler at install.
HOT = (
    (0, 3, 13),  # Produce
    (1, 4, 18),  # Fetch
    (12, 0, 4),  # Heartbeat
    (68, 0, 1),  # ConsumerGroupHeartbeat
    (76, 0, 1),  # ShareGroupHeartbeat
    (78, 0, 2),  # ShareFetch
    (79, 0, 2),  # ShareAcknowledge
)
PURE_ENV = "KWIRE_PURE"  # kwire.compiled.PURE_ENV (kwire.compiled is not imported below the cli: layers)

_modules: dict[str, dict] = {}  # module name -> its DECODERS ({} when it is not there)


def module_name(api_key: int, kind: str) -> str:
    return f"kwire.native._aot_{api_key}_{kind}"


# One module per api and kind: they compile in parallel at install.
MODULES = tuple(module_name(api_key, kind) for api_key, _, _ in HOT for kind in ("request", "response"))


def _decoders_of(api_key: int, kind: str) -> dict:
    """(message name, version) -> (SHA-256 of the source, factory), of one built module; {} without it.
    Imported when a decoder of its api and kind is first asked for: a run maps only those it uses."""
    name = module_name(api_key, kind)
    table = _modules.get(name)
    if table is None:
        table = {}
        if os.environ.get(PURE_ENV, "") in ("", "0") and name in MODULES:
            try:  # built by setup.py where a C compiler is there
                table = dict(getattr(importlib.import_module(name), "DECODERS", {}))
            except ImportError:  # not built (or not mappable: a memory limit): the generated source runs
                pass
            except (AttributeError, TypeError, ValueError):  # what it cimports (kwire/native/raw_records.pxd) runs
                pass  # as Python (its source changed since the build): the generated source runs
        _modules[name] = table
    return table


def _compiled_table() -> dict:
    """Every built module's DECODERS together (report(), tests)."""
    out: dict = {}
    for api_key, _, _ in HOT:
        for kind in ("request", "response"):
            out.update(_decoders_of(api_key, kind))
    return out


# What makes a compiled decoder of the generated source besides that source: kwire.codec.aot_build's rewriting
# of its reads, the C readers they become (kwire/native/c_reads.pxd) and the records value it makes
# (kwire/native/raw_records.pxd). A change to any is a new source.
_BUILT_BY = ("codec/aot_build.py", "native/c_reads.pxd", "native/raw_records.pxd")  # in the kwire package
_built_by: list[bytes] = []


def source_digest(source: str) -> str:
    """The SHA-256 a compiled decoder of the generated `source` is recorded with (and checked against)."""
    if not _built_by:
        digest = sha256()
        for name in _BUILT_BY:
            try:
                with open(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), name), "rb") as f:
                    digest.update(f.read())
            except OSError:  # not there: no compiled decoder is used
                digest.update(b"\0missing " + name.encode())
        _built_by.append(digest.digest())
    return sha256(_built_by[0] + source.encode("utf-8")).hexdigest()


def compiled_decoder(api_key: int, kind: str, name: str, version: int, source: str, namespace: dict) -> dict | None:
    """The functions of the compiled decoder of `name` (api `api_key`'s `kind`) at `version` ({function name:
    function}, the ones the generated `source` defines), bound to `namespace` (the constants the generator
    made for `source`); None when there is none, or it was built from another source."""
    entry = _decoders_of(api_key, kind).get((name, version))
    if entry is None or entry[0] != source_digest(source):
        return None
    try:
        functions = entry[1](namespace)
    except Exception:  # a namespace without a constant the source names: not this source's; run the source
        return None
    return functions


def report() -> str:
    """One line on the compiled decoders, e.g. for `kwire --version`."""
    table = _compiled_table()
    if not table:
        return "compiled decoders: none"
    spans = ", ".join(f"{APIS[api_key].name} v{first}-v{last}" for api_key, first, last in HOT)
    return f"compiled decoders: {len(table)} requests and responses ({spans})"
