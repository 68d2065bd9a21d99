"""No pickle, marshal, eval or exec of captured data anywhere in kwire (a grep, kept as a test).

The one exec is the schema compiler's (kwire/codec/compiler.py): it runs source generated from the
schemas, which are kwire's own constants; the only wire value involved, the api version, just picks
a cached decoder (and must be a version the schema declares). kwire/codec/code_cache.py compiles that
source and caches the code objects (marshal, in the user's cache directory): no captured byte is ever
marshalled.

kwire.parallel hands exchanges to worker processes it forked (kwire.forkpool), pickled: flat
tuples of ints, strings and bytes that the main process built itself, over pipes between kwire's
own processes, created before the fork and held by nothing else; the results come back the same way (`kwire
stats` keeps the pickled batches a worker folded, to redo them here if it dies: still kwire's own). kwire.live.channel does the same between `kwire live`'s capture process and
the dashboard's (the pipe is created by the dashboard's process before it forks the other, and
nothing else holds it). kwire's Spark job does the same between its own tasks and its driver: each
task's PartitionResult (Aggregators, counters: objects kwire built) travels as a pickle inside
Spark's Arrow rows (kwire.spark.wire), as do the batches of paired, undecoded exchanges a reduce task
hands to the decode stage (kwire.spark.spread: flat tuples, as kwire.parallel's), and `--follow` keeps each open connection's stream layers in
Spark's state with PySpark's cloudpickle (kwire.spark.follow), as PySpark itself ships every
function and row. Captured bytes travel as bytes values; nothing read from a capture is ever
unpickled as a pickle stream.
"""

from __future__ import annotations

import re
from pathlib import Path

KWIRE = Path(__file__).resolve().parent.parent.parent / "kwire"
FORBIDDEN = re.compile(r"\b(pickle|cPickle|marshal|shelve|dill|cloudpickle|yaml\.load|jsonpickle)\b"
                       r"|(?<![.\w])(eval|exec|compile)\s*\(|\b__import__\s*\(|\bimportlib\.import_module\s*\(")
ALLOWED = {
    ("codec/compiler.py", "exec"), ("codec/code_cache.py", "compile"),  # schemas -> decoders
    # The on-disk cache of those decoders' code objects: written and read back by kwire only, keyed by
    # the sha256 of kwire's own generated source, each file checked against its digest before use.
    ("codec/code_cache.py", "marshal"),
    ("cli/main.py", "__import__"),                                     # kwire's own command modules
    ("codec/schemas/__init__.py", "importlib.import_module"),          # kwire's own schema modules
    ("codec/aot.py", "importlib.import_module"),                       # kwire's own compiled decoders
    # Batches kwire's main process builds (tuples of ints, strings, bytes), to the workers it forked,
    # and their results back, over pipes only the two hold.
    ("forkpool.py", "pickle"),
    # Inside such a batch (kwire.native.exchange_wire), the few values that are neither ints, strings nor bytes (where
    # frames lie on the wire: tuples kwire made of its own counts), pickled and unpickled by kwire alone.
    ("native/exchange_wire.py", "pickle"),
    # Batches kwire's capture process builds (tuples of ints, strings, bytes), to the dashboard's
    # process over a pipe only the two hold: as kwire.forkpool does.
    ("live/channel.py", "pickle"),
    # What kwire's own Spark tasks computed, to its driver and to the next micro-batch (see above).
    ("spark/wire.py", "pickle"), ("spark/follow.py", "cloudpickle"),
}


def test_no_pickle_eval_or_exec_of_data():
    found = []
    for path in sorted(KWIRE.rglob("*.py")):
        rel = path.relative_to(KWIRE).as_posix()
        for n, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("#", 1)[0]
            if code.lstrip().startswith(('"', "'")) or not code.strip():
                continue
            for m in FORBIDDEN.finditer(code):
                word = (m.group(1) or m.group(2) or m.group(0)).split("(")[0].strip()
                if (rel, word) not in ALLOWED and not re.search(r"re\.compile|\.compile\(", code):
                    found.append(f"{rel}:{n}: {line.strip()}")
    assert not found, "\n".join(found)


def test_compiler_exec_takes_no_wire_bytes():
    source = (KWIRE / "codec" / "compiler.py").read_text()
    (call,) = re.findall(r"exec\((.*)\)", source)
    assert call.startswith("code, self.namespace")
    assert "code = compiled_code(source," in source  # the source it generated from the schema
    cache = (KWIRE / "codec" / "code_cache.py").read_text()
    assert set(re.findall(r"(?<![.\w])compile\((\w+),", cache)) == {"source"}
