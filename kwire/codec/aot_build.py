"""The source of kwire.native._aot_*, the decoders compiled ahead of time (kwire.codec.aot), made at build time.

`module_sources()` gives, per module of kwire.codec.aot.MODULES, Python for Cython's pure-Python mode, generated from the schemas by
kwire.codec.compiler (never written by hand, never committed: setup.py writes it into the build folder
and compiles it). Per (message, version) of kwire.codec.aot.HOT it holds a factory:

    def make_ProduceRequest_v10(_ns):
        _S_1 = _ns['_S_1']          # the constants the generator made, bound once
        ...
        @cython.locals(pos=cython.Py_ssize_t, end=..., _n=..., _e=..., left=...)
        def decode(buf, pos=0):     # the generated source, with no block outlined and its reads in C (below)
            ...
        return {'decode': decode, ...}

and DECODERS = {(name, version): (SHA-256 of the source kwire generates at run time, factory)}. The generated functions
become closures of the factory: the constants are C fields of the closure, not dict lookups of module
globals. Declared as C integers: the offset (pos), the end (end), lengths (_n, _e) and the entries a body
may still make (left), names the generator only ever binds to ints that fit (lengths come from int32 and
32-bit varint fields).

The bytes are read in C (`c_reads`): each struct unpack, byte index and string or bytes slice of the body
the generated source makes is rewritten into a call of kwire/native/c_reads.pxd's readers, which Cython inlines
(a struct unpack through Python's struct module makes a tuple and costs about 600 instructions; the C read
of a field about 30). The rewriting changes no value, and tests/codec/test_aot.py compares every decoder of
the module source, as Python (kwire/native/c_reads.py) and as built, with the generated source on real and
hostile bodies. `decode` makes a memoryview that is not a plain one of bytes a view of a copy of its bytes.
"""

from __future__ import annotations

import re
import struct

from kwire.codec.aot import HOT, MODULES, module_name, source_digest
from kwire.codec.compiler import _Generator
from kwire.codec.schemas import schema_for

C_INTEGERS = ("pos", "end", "_n", "_e", "left")
_DECLARE = "@cython.locals(" + ", ".join(f"{name}=cython.Py_ssize_t" for name in C_INTEGERS) + ")"


class _Inlined(_Generator):
    """The generator with no block outlined: every struct and array read inline in `decode` (the generated
    source bounds a function's length for Python's sake, kwire.codec.compiler._Generator.outline; compiled, a
    call of another function costs more than reading the fields). It makes the same constants, in the same
    order, as the generated source: the factory binds those of the source it is checked against."""

    def outline(self, code):
        return code


def generators(api_key: int, kind: str, first: int, last: int) -> list[_Generator]:
    """An _Inlined generator, its source made, per version of the message from `first` to `last` that its schema
    has; its `checked_source` is the source kwire generates at run time (kwire.codec.compiler), whose digest
    the compiled decoder is recorded with."""
    schema = schema_for(api_key, kind)
    out = []
    for version in range(first, last + 1):
        if schema is not None and version in schema.valid:
            generator, checked = _Inlined(schema, version), _Generator(schema, version)
            generator.generate()
            generator.checked_source = checked.generate()
            assert same_constants(generator.namespace, checked.namespace), (schema.name, version)
            out.append(generator)
    return out


def same_constants(inlined: dict, checked: dict) -> bool:
    """Whether the two namespaces bind the same names to the same structs (the inlined source reads the
    checked source's constants at run time)."""
    if inlined.keys() != checked.keys():
        return False
    return all(value.format == checked[name].format if isinstance(value, struct.Struct) else type(value) is type(checked[name])
               for name, value in inlined.items())


def factory_name(generator: _Generator) -> str:
    return re.sub(r"\W", "_", f"make_{generator.schema.name}_v{generator.version}")


# struct code -> the c_reads reader of one such field
_READERS = {"?": "_bool", "b": "_i8", "h": "_i16", "H": "_u16", "i": "_i32", "I": "_u32", "q": "_i64", "d": "_f64",
            "16s": "_b16"}
C_READS = ("_plain", "_view", "_u8", "_utf8", "_bytes_at") + tuple(sorted(set(_READERS.values())))
_UNPACK_FIELDS = re.compile(r"^(\s*)((?:\w+, )*\w+),? = (_S_\d+)\.unpack_from\(buf, pos\)$")
_UNPACK_ONE = re.compile(r"^(\s*)(\w+) = (_S_\d+)\.unpack_from\(buf, pos\)\[0\]; (pos \+= \d+)$")
_SIMPLE = ((re.compile(r"\b_I16\(buf, pos\)\[0\]"), "_i16(buf, pos)"),
           (re.compile(r"\b_I32\(buf, pos\)\[0\]"), "_i32(buf, pos)"),
           (re.compile(r"\bstr\(buf\[pos:_e\], 'utf-8', 'replace'\)"), "_utf8(buf, pos, _e)"),
           (re.compile(r"\bbytes\(buf\[pos:_e\]\)"), "_bytes_at(buf, pos, _e)"),
           (re.compile(r"\bbuf\[pos\]"), "_u8(buf, pos)"),
           (re.compile(r"\b_memoryview\(buf\)"), "_view(buf)"),
           (re.compile(r"\b_raw_records\("), "raw_records("))  # kwire/native/raw_records.pxd's, a C call


def field_reads(fmt: str) -> list[tuple[str, int]]:
    """(c_reads reader, offset) of each field of a big-endian struct format."""
    assert fmt[0] == ">", fmt
    out, offset = [], 0
    for code in re.findall(r"16s|[?bhHiIqd]", fmt[1:]):
        out.append((_READERS[code], offset))
        offset += struct.calcsize(">" + code)
    assert offset == struct.calcsize(fmt), fmt
    return out


def c_reads(line: str, namespace: dict) -> list[str]:
    """One line of generated source with its reads of `buf` made calls of c_reads (see above)."""
    match = _UNPACK_FIELDS.match(line)
    if match:
        indent, names, constant = match.groups()
        reads = field_reads(namespace[constant].format)
        names = names.split(", ")
        assert len(names) == len(reads), line
        return [f"{indent}{name} = {reader}(buf, pos + {offset})" if offset else f"{indent}{name} = {reader}(buf, pos)"
                for name, (reader, offset) in zip(names, reads)]
    match = _UNPACK_ONE.match(line)
    if match:
        indent, name, constant, step = match.groups()
        ((reader, _),) = field_reads(namespace[constant].format)
        return [f"{indent}{name} = {reader}(buf, pos); {step}"]
    for pattern, replacement in _SIMPLE:
        line = pattern.sub(replacement, line)
    if line.strip() == "end = len(buf)":  # decode's, once the body is bytes or a memoryview: its bytes' end
        return [line.replace("end = len(buf)", "if mv is not None: buf = mv = _plain(mv)"), line]
    return [line]


_BIND_APPEND = re.compile(r"^\s*(_ap\d+) = (\w+)\.append$")
_CALL_APPEND = re.compile(r"\b(_ap\d+)\(")


def list_appends(lines: list[str]) -> list[str]:
    """The lines with `_apN = v.append` ... `_apN(x)` (a bound method kept: the fast way in Python) made
    `v.append(x)`, which Cython compiles to a C append (a bound method is a Python call)."""
    out, lists = [], {}
    for line in lines:
        match = _BIND_APPEND.match(line)
        if match:
            lists[match.group(1)] = match.group(2)
            continue
        out.append(_CALL_APPEND.sub(lambda m: f"{lists[m.group(1)]}.append(", line))
    return out


def factory_source(generator: _Generator) -> str:
    lines = [out for line in generator.source.splitlines() for out in c_reads(line, generator.namespace)]
    source = "\n".join(list_appends(lines))
    assert "buf[" not in source and "unpack_from(buf" not in source, "a read of the body left in Python"
    assert "_raw_records(" not in source and "_memoryview(" not in source, "a Python-level call left"
    defined = re.findall(r"^def (\w+)\(", source, re.M)
    constants = [name for name in generator.namespace if not name.startswith("__") and name not in defined]
    out = [f"def {factory_name(generator)}(_ns):"]
    out += [f"    {name} = _ns[{name!r}]" for name in constants]
    for line in source.splitlines():
        if line.startswith("def "):
            out.append("    " + _DECLARE)
        out.append("    " + line if line else "")
    out.append("    return {" + ", ".join(f"{name!r}: {name}" for name in defined) + "}")
    return "\n".join(out) + "\n"


def module_source(made: list[_Generator]) -> str:
    parts = ['"""Generated by kwire.codec.aot_build at build time (setup.py): do not edit."""\n', "import cython\n",
             f"from cython.cimports.kwire.native.c_reads import {', '.join(C_READS)}\n",
             "from cython.cimports.kwire.native.raw_records import raw_records\n"]
    parts += [factory_source(g) for g in made]
    table = "".join(f"    ({g.schema.name!r}, {g.version}): ({source_digest(g.checked_source)!r}, {factory_name(g)}),\n"
                    for g in made)
    parts.append("DECODERS = {\n" + table + "}\n")
    return "\n".join(parts)


def module_sources() -> dict[str, str]:
    """module name -> its source, for every module of MODULES."""
    out = {}
    for api_key, first, last in HOT:
        for kind in ("request", "response"):
            out[module_name(api_key, kind)] = module_source(generators(api_key, kind, first, last))
    assert tuple(out) == MODULES
    return out
