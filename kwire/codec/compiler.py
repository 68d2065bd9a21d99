"""Compile a message schema, for one version, into a fast decoder.

`decoder_for(schema, version)` generates Python source for the message as it is in that version (one
entry function reading the structs inline, where a block grown past FUNCTION_LINES lines becomes a
function of its own) (fields absent from the version vanish, runs of fixed-width fields become one
struct.unpack_from, flexible versions switch to compact lengths and tagged-field sections) and
compiles it once; the result is cached per (schema, version).

A decoder is `decode(buf, pos) -> (dict, pos)`. The dict uses Kafka's field names. Values:
int, bool, float, str, None, list, dict; uuid -> Kafka's base64 text; bytes -> bytes;
records -> kwire.codec.values.RawRecords (lazy: decoded later only if asked). Tagged fields that
the schema does not know are kept as raw bytes under "_unknown_tagged_fields" {tag: hex}.

Guarantees: never reads past `buf`; every length read from the wire is checked against the bytes
left before anything is allocated (an array claiming 2**31 elements in 30 bytes fails at once);
any malformation raises DecodeError with the offset and the field's path, nothing else (a null in a field the
schema does not declare nullable in the version: NullNotNullable, at that field's length, as Kafka's own readers
stop there; an element of an array is never nullable, as in Kafka). One body makes
at most MAX_BODY_ENTRIES entries (an element of an array of structs, strings, bytes or uuids counts 1,
eight numbers count 1): past it BodyTooLarge (a DecodeError kwire raises by choice, not for a
malformation), so a well-formed answer of a million configs costs a bound, not gigabytes.

The compiled code objects are also kept on disk (kwire.codec.code_cache): later runs skip compiling.
"""

from __future__ import annotations

import os
import struct
import sys

from kwire.codec.aot import compiled_decoder
from kwire.counts import count as counted
from kwire.codec.code_cache import compiled_code
from kwire.kafka.primitives import kafka_uuid, read_uvarint
from kwire.codec.schema import Field, MessageSchema, Versions
from kwire.codec.values import raw_records
from kwire.errors import BodyTooLarge, DecodeError, NullNotNullable


def _env_int(name: str, default: int) -> int:
    try:
        return max(1, int(os.environ.get(name, default)))
    except ValueError:
        return default


MAX_BODY_ENTRIES = _env_int("KWIRE_MAX_BODY_ENTRIES", 250_000)
# What a decode may still make; reset by every decode() (decoders run one at a time per process).
_ENTRIES_LEFT = [MAX_BODY_ENTRIES]


def _too_many(what: str, pos: int) -> BodyTooLarge:
    return BodyTooLarge(f"more than {MAX_BODY_ENTRIES:,} entries in one body (KWIRE_MAX_BODY_ENTRIES)",
                        pos, field=what)

_FIXED = {  # type -> (struct code, size)
    "bool": ("?", 1),
    "int8": ("b", 1),
    "int16": ("h", 2),
    "uint16": ("H", 2),
    "int32": ("i", 4),
    "uint32": ("I", 4),
    "int64": ("q", 8),
    "float64": ("d", 8),
    "uuid": ("16s", 16),
}

_I16 = struct.Struct(">h").unpack_from
_I32 = struct.Struct(">i").unpack_from


def _trunc(what: str, pos: int, need: int, have: int) -> DecodeError:
    return DecodeError(f"need {counted(need, 'byte')}, {max(have, 0):,} left", pos, field=what)


def _cannot_fit(n: int, left: int, pos: int, what: str) -> DecodeError:
    """An array whose declared length of `n` elements cannot fit in the `left` bytes that follow it."""
    return DecodeError(f"{counted(n, 'element')} cannot fit in {counted(left, 'byte')}", pos, field=what)


def _null(what: str, pos: int, n: int) -> NullNotNullable:
    """A null length `n` at `pos` (where the length starts) in a field the schema does not declare nullable."""
    return NullNotNullable(f"null (length {n}) in a field not nullable in this version", pos, field=what)


NEVER = Versions.parse("none")  # an array's elements: never null (Kafka reads them as non-nullable)


def _uvar(buf, pos):
    b = buf[pos]
    if b < 0x80:
        return b, pos + 1
    return read_uvarint(buf, pos)


def _tagged_section(buf, pos, end, out, table, what, left):
    """A tagged-field section with at least one field: known tags are read by their readers (each
    confined to its declared size), unknown ones kept as hex under "_unknown_tagged_fields".
    (pos after it, the entries the body may still make): `left` in, through _LEFT for the readers."""
    _ENTRIES_LEFT[0] = left
    count, pos = _uvar(buf, pos)
    for _ in range(count):
        if pos >= end:
            raise _trunc(what, pos, 1, 0)
        tag, pos = _uvar(buf, pos)
        if pos >= end:
            raise _trunc(what, pos, 1, 0)
        size, pos = _uvar(buf, pos)
        stop = pos + size
        if stop > end:
            raise _trunc(what, pos, size, end - pos)
        handler = table.get(tag)
        if handler is None:
            out.setdefault("_unknown_tagged_fields", {})[tag] = _unknown_tag_hex(buf, pos, stop)
        else:
            out[handler[0]] = handler[1](buf, pos, stop)
        pos = stop
    return pos, _ENTRIES_LEFT[0]


def _uuid(buf, pos, end, what):
    """A uuid field (the generated code reads runs of fixed fields itself, a lone uuid here)."""
    e = pos + 16
    if e > end:
        raise _trunc(what, pos, 16, end - pos)
    return kafka_uuid(buf[pos:e]), e


def _unknown_tag_hex(buf, pos, e):
    return bytes(buf[pos:e]).hex()


_RUNTIME = {
    "_uvar": _uvar,
    "_tagged_section": _tagged_section,
    "_uuid": _uuid,
    "_kafka_uuid": kafka_uuid,
    "_trunc": _trunc,
    "_cannot_fit": _cannot_fit,
    "_null": _null,
    "DecodeError": DecodeError,
    "_unpack_from": struct.unpack_from,
    "_read_uvarint": read_uvarint,
    "_I16": _I16,
    "_I32": _I32,
    "_raw_records": raw_records,
    "_LEFT": _ENTRIES_LEFT,
    "_too_many": _too_many,
    "_memoryview": memoryview,
    "_bytes": bytes,
    "_struct_error": struct.error,
    "_limits": sys.modules[__name__],  # MAX_BODY_ENTRIES read at each decode (tests change it)
}


# The most lines a generated function has from the blocks read inline in it (a struct's own fields are
# never split: its function is at least that long; an array of structs adds its ~20 lines to its element).
# Chosen on numbers (callgrind): at 50, tests/fuzz/test_bounds.py's slowest case (StreamsGroupDescribeResponse
# v1, under tracemalloc) costs 1 % more instructions than with a function per struct, at 120 16 % more; decoding
# every body of the committed captures costs 31 % fewer instructions than a function per struct, Produce v10's
# many-small bodies 6 % fewer (12 % with every struct inlined).
FUNCTION_LINES = 50


class _Block:
    """Code reading one value into the local `result` (a struct, an array of structs): lines (indented
    from column 0) and _Inline items for the blocks inside it; `size`: its lines where it is inlined."""

    __slots__ = ("items", "result", "size")

    def __init__(self, items: list, result: str):
        self.items = items
        self.result = result
        self.size = sum(item.size() if isinstance(item, _Inline) else 1 for item in items)

    def emit(self, out: list[str], indent: str) -> None:
        _emit(self.items, out, indent)


class _Inline:
    """A block inside another one's code, at `indent`: its code there, or `call`, the line calling
    the function made of it."""

    __slots__ = ("indent", "code", "call")

    def __init__(self, indent: str, code: _Block):
        self.indent = indent
        self.code = code
        self.call: str | None = None

    def size(self) -> int:
        return 1 if self.call else self.code.size


def _emit(items: list, out: list[str], indent: str) -> None:
    for item in items:
        if isinstance(item, _Inline):
            if item.call:
                out.append(indent + item.indent + item.call)
            else:
                item.code.emit(out, indent + item.indent)
        else:
            out.append(indent + item)


class _Generator:
    """Emits the source of one (message, version): one entry function with every struct inlined (no
    call per struct or element), plus a reader function per tagged field."""

    def __init__(self, schema: MessageSchema, version: int, lenient: bool = False):
        self.schema = schema
        self.version = version
        self.lenient = lenient  # every null read as None, nullable or not (kwire.native.exchange_build, after NullNotNullable)
        self.flexible = schema.is_flexible(version)
        self.namespace: dict[str, object] = dict(_RUNTIME)
        self.chunks: list[str] = []
        self.counters: dict[str, int] = {}  # per stem: a constant's name does not depend on how many blocks were outlined
        self.tag_tables: list[dict] = []  # {tag: (field name, reader function name)}, resolved after exec

    def fresh(self, stem: str) -> str:
        number = self.counters[stem] = self.counters.get(stem, 0) + 1
        return f"_{stem}_{number}"

    def const(self, stem: str, value: object) -> str:
        name = self.fresh(stem)
        self.namespace[name] = value
        return name

    # -- sizes

    def min_size(self, field: Field) -> int:
        """The fewest bytes one value of `field` takes on the wire in this version."""
        if field.is_array:
            return 1 if self.flexible else 4
        t = field.type
        if field.is_struct:
            if field.nullable_in(self.version):  # a null struct is its int8 marker alone (-1)
                return 1
            return self.struct_min_size(field.fields or ())
        if t in _FIXED:
            return _FIXED[t][1]
        if t == "string":
            return 1 if self.flexible else 2
        return 1 if self.flexible else 4  # bytes, records

    def struct_min_size(self, fields) -> int:
        size = 1 if self.flexible else 0
        for f in fields:
            if f.present_in(self.version) and not (self.flexible and f.tagged_in(self.version)):
                size += self.min_size(f)
        return size

    # -- code for one value. `d` is the depth of the struct being read: its locals are v{d}_*, its
    # -- dict o{d}, a struct inside it is read into o{d+1}.

    def value_code(self, field: Field, path: str, indent: str, target: str, d: int) -> list[str]:
        """Lines that read one value of `field` at `pos` into `target`, advancing `pos`."""
        if field.is_array and field.is_struct:
            # A block of its own, which the struct holding it may make a function (one call per array).
            # Its element was bounded by its own struct_code: the array adds its ~20 lines to that.
            return [_Inline(indent, _Block(self.array_code(field, path, "", target, d), target))]
        if field.is_array:
            return self.array_code(field, path, indent, target, d)
        if field.is_struct:
            return self.struct_value_code(field, path, indent, target, d)
        t = field.type
        if t in ("string", "bytes", "records"):
            return self.sized_code(t, repr(path), indent, target, field.nullable_in(self.version))
        if t == "uuid":
            return [f"{indent}{target}, pos = _uuid(buf, pos, end, {path!r})"]
        code, size = _FIXED[t]
        s = self.const("S", struct.Struct(">" + code))
        return [
            f"{indent}if pos + {size} > end: raise _trunc({path!r}, pos, {size}, end - pos)",
            f"{indent}{target} = {s}.unpack_from(buf, pos)[0]; pos += {size}",
        ]

    def array_code(self, field: Field, path: str, indent: str, target: str, d: int) -> list[str]:
        """An array: its length (checked against the bytes left at the smallest element size), then
        its elements (structs read inline in the loop, fixed-width numbers in one unpack)."""
        what = repr(path)
        elem = field.element_type
        lines = self.length_code(indent, "_n", what, self.flexible, 4)
        lines.append(f"{indent}if _n > 0 and _n * {self.elem_min_size(field)} > end - pos:")
        lines.append(f"{indent}    raise _cannot_fit(_n, end - pos, pos, {what})")
        cost = "_n >> 3" if elem in _FIXED and elem != "uuid" and not field.is_struct else "_n"
        lines.append(f"{indent}left -= {cost}")
        lines.append(f"{indent}if left < 0: raise _too_many({what}, pos)")
        lines.append(f"{indent}if _n < 0:")
        lines.append(f"{indent}    {self.null_value(target, what, field.nullable_in(self.version), 4)}")
        if field.is_struct or elem not in _FIXED:  # an empty array (common) skips the loop's set-up
            lines.append(f"{indent}elif not _n:")
            lines.append(f"{indent}    {target} = []")
        lines.append(f"{indent}else:")
        inner = indent + "    "
        if field.is_struct:
            return lines + [
                f"{inner}{target} = []",
                f"{inner}_ap{d} = {target}.append",
                f"{inner}for _ in range(_n):",
                _Inline(inner + "    ", self.struct_code(field.fields or (), path + "[]", d + 1)),
                f"{inner}    _ap{d}(o{d + 1})",
            ]
        if elem in _FIXED and elem not in ("uuid", "bool"):
            code, size = _FIXED[elem]
            return lines + [
                f"{inner}{target} = list(_unpack_from('>%d{code}' % _n, buf, pos))",
                f"{inner}pos += _n * {size}",
            ]
        item = Field(field.name, elem, field.versions, NEVER, None, field.tagged, None)
        lines += [f"{inner}{target} = []", f"{inner}for _ in range(_n):"]
        lines += self.value_code(item, path + "[]", inner + "    ", "_x", d)
        lines.append(f"{inner}    {target}.append(_x)")
        return lines

    def struct_value_code(self, field: Field, path: str, indent: str, target: str, d: int) -> list:
        body = _Inline(indent, self.struct_code(field.fields or (), path, d + 1))
        if field.nullable_in(self.version):
            # A nullable struct is preceded by an int8: -1 null, 1 present.
            body.indent += "    "
            return [
                f"{indent}if pos >= end: raise _trunc({path!r}, pos, 1, 0)",
                f"{indent}if buf[pos] == 0xFF:",
                f"{indent}    {target} = None; pos += 1",
                f"{indent}else:",
                f"{indent}    pos += 1",
                body,
                f"{indent}    {target} = o{d + 1}",
            ]
        return [body, f"{indent}{target} = o{d + 1}"]

    def null_value(self, target: str, what: str, nullable: bool, width: int) -> str:
        """The line for a null length: the value None where the field is nullable, else NullNotNullable at
        the length's first byte (a compact null is the one byte 0; else `width` bytes)."""
        if nullable or self.lenient:
            return f"{target} = None"
        return f"raise _null({what}, pos - {1 if self.flexible else width}, _n)"

    def sized_code(self, t: str, what: str, indent: str, target: str, nullable: bool) -> list[str]:
        """A string, bytes or records value, inlined: a length (int16 for strings, int32 otherwise; a
        varint of length+1 when flexible), -1 for null, then that many bytes, checked against the end."""
        width = 2 if t == "string" else 4
        lines = self.length_code(indent, "_n", what, self.flexible, width)
        if t == "string":
            value = [f"{target} = str(buf[pos:_e], 'utf-8', 'replace')"]
        elif t == "bytes":
            value = [f"{target} = bytes(buf[pos:_e])"]
        else:  # a view of the frame, never a copy; RawRecords made without a Python-level __init__
            value = ["if mv is None: mv = _memoryview(buf)", f"{target} = _raw_records(mv[pos:_e])"]
        return lines + [
            f"{indent}if _n < 0:",
            f"{indent}    {self.null_value(target, what, nullable, width)}",
            f"{indent}else:",
            f"{indent}    _e = pos + _n",
            f"{indent}    if _e > end: raise _trunc({what}, pos, _n, end - pos)",
            *(f"{indent}    {line}" for line in value),
            f"{indent}    pos = _e",
        ]

    def length_code(self, indent: str, target: str, what: str, compact: bool, width: int) -> list[str]:
        """Lines reading a length into `target`: a varint of length+1 when compact, else int16/int32."""
        if compact:
            return [
                f"{indent}if pos >= end: raise _trunc({what}, pos, 1, 0)",
                f"{indent}{target} = buf[pos]",
                f"{indent}if {target} < 0x80:",
                f"{indent}    pos += 1",
                f"{indent}else:",
                f"{indent}    {target}, pos = _read_uvarint(buf, pos)",
                f"{indent}{target} -= 1",
            ]
        reader = "_I16" if width == 2 else "_I32"
        return [
            f"{indent}if pos + {width} > end: raise _trunc({what}, pos, {width}, end - pos)",
            f"{indent}{target} = {reader}(buf, pos)[0]",
            f"{indent}pos += {width}",
        ]

    def elem_min_size(self, field: Field) -> int:
        elem = field.element_type
        if field.is_struct:
            return max(self.struct_min_size(field.fields or ()), 1)
        if elem in _FIXED:
            return _FIXED[elem][1]
        return 1 if self.flexible else (2 if elem == "string" else 4)

    # -- one struct: inline where it is small, else a function of its own

    def struct_code(self, fields, path: str, d: int) -> _Block:
        """The code reading one struct at `pos` into the dict o{d}, advancing `pos` (indented from
        column 0; the structs inside it as _Inline items, each inlined or called as outline() decides)."""
        v = self.version
        regular = [f for f in fields if f.present_in(v) and not (self.flexible and f.tagged_in(v))]
        tagged = [f for f in fields if f.present_in(v) and self.flexible and f.tagged_in(v)]
        body: list = []
        locals_: list[tuple[str, str]] = []
        i = 0
        while i < len(regular):
            f = regular[i]
            if not f.is_array and not f.is_struct and f.type in _FIXED:
                run = [f]
                while (i + len(run) < len(regular) and not regular[i + len(run)].is_array
                       and not regular[i + len(run)].is_struct and regular[i + len(run)].type in _FIXED):
                    run.append(regular[i + len(run)])
                fmt = ">" + "".join(_FIXED[x.type][0] for x in run)
                size = struct.calcsize(fmt)
                s = self.const("S", struct.Struct(fmt))
                names = [f"v{d}_{i + k}" for k in range(len(run))]
                what = repr(f"{path}.{run[0].name}" if path else run[0].name)
                body.append(f"if pos + {size} > end: raise _trunc({what}, pos, {size}, end - pos)")
                body.append(f"{', '.join(names)}{',' if len(names) == 1 else ''} = {s}.unpack_from(buf, pos)")
                body.append(f"pos += {size}")
                for k, x in enumerate(run):
                    if x.type == "uuid":
                        body.append(f"{names[k]} = _kafka_uuid({names[k]})")
                    locals_.append((x.name, names[k]))
                i += len(run)
                continue
            local = f"v{d}_{i}"
            body += self.value_code(f, f"{path}.{f.name}" if path else f.name, "", local, d)
            locals_.append((f.name, local))
            i += 1
        items = ", ".join(f"{k!r}: {loc}" for k, loc in locals_)
        body.append(f"o{d} = {{{items}}}")
        if self.flexible:
            table = {}
            for f in tagged:
                reader = self.tagged_reader(f, f"{path}.{f.name}" if path else f.name)
                table[f.tag] = (f.name, reader)
            t = self.const("TAGS", table)
            self.tag_tables.append(table)
            what = repr(f"{path}.<tagged fields>" if path else "<tagged fields>")
            # The common case, no tagged field at all, costs one byte test; otherwise the shared
            # reader walks the section (its readers count entries in _LEFT).
            body += [
                f"if pos >= end: raise _trunc({what}, pos, 1, 0)",
                "if buf[pos]:",
                f"    pos, left = _tagged_section(buf, pos, end, o{d}, {t}, {what}, left)",
                "else:",
                "    pos += 1",
            ]
        return self.outline(_Block(body, f"o{d}"))

    def outline(self, code: _Block) -> _Block:
        """Bounds the function `code` ends up in: the blocks inside it read inline (a struct, an array
        of structs), largest first, become calls of functions of their own until it is at most
        FUNCTION_LINES lines long (an array made a function costs one call, not one per element).
        (Python finds the line of an instruction by walking its function's line table from the start,
        so tracemalloc, which asks at every allocation, costs time in proportion to a function's size.)"""
        inner = sorted((item for item in code.items if isinstance(item, _Inline)), key=lambda x: -x.code.size)
        for item in inner:
            if code.size <= FUNCTION_LINES:
                break
            item.call = self.struct_function(item.code)
            code.size -= item.code.size - 1
        return code

    def struct_function(self, code: _Block) -> str:
        """A function reading what the block `code` reads: (value, pos, entries left) from (buf, pos,
        end, mv, entries left); the line calling it."""
        name = self.fresh("read")
        lines = [f"def {name}(buf, pos, end, mv, left):"]
        code.emit(lines, "    ")
        lines.append(f"    return {code.result}, pos, left")
        self.chunks.append("\n".join(lines) + "\n")
        return f"{code.result}, pos, left = {name}(buf, pos, end, mv, left)"

    def tagged_reader(self, field: Field, path: str) -> str:
        """A function reading a tagged field's value confined to its declared size."""
        name = self.fresh("tag")
        lines = [f"def {name}(buf, pos, end):", "    left = _LEFT[0]",
                 "    mv = buf if type(buf) is _memoryview else None"]
        _emit(self.bounded(self.value_code(field, path, "", "val", 0)), lines, "    ")
        lines += ["    _LEFT[0] = left", "    return val"]
        self.chunks.append("\n".join(lines) + "\n")
        return name

    def bounded(self, items: list) -> list:
        """`items` (code that is not one struct's: a tagged reader's value) with outline() applied."""
        return self.outline(_Block(items, "val")).items

    def entry(self) -> str:
        """The decoder: decode(buf, pos=0) -> (dict, end), errors labelled with the message."""
        lines = [
            "def decode(buf, pos=0):",
            # bytes are read as they are (a slice of bytes is cheaper than one of a memoryview);
            # records are views of the frame either way (mv, made when first needed)
            "    if type(buf) is _bytes:",
            "        mv = None",
            "    elif type(buf) is _memoryview:",
            "        mv = buf",
            "    else:",
            "        buf = mv = _memoryview(buf)",
            "    end = len(buf)",
            "    left = _LEFT[0] = _limits.MAX_BODY_ENTRIES",
            "    try:",
        ]
        self.struct_code(self.schema.fields, "", 0).emit(lines, "        ")
        lines += [
            "        return o0, pos",
            "    except DecodeError as exc:",
            "        raise type(exc)(exc.reason, exc.offset, exc.field, _LABEL) from None",
            "    except (_struct_error, IndexError, ValueError, OverflowError, MemoryError) as exc:",
            "        raise DecodeError(f\"malformed ({exc})\", message_name=_LABEL) from None",
        ]
        self.chunks.append("\n".join(lines) + "\n")
        return "decode"

    def generate(self) -> str:
        """The source (also self.source), its constants in self.namespace."""
        self.top = self.entry()
        self.namespace["_LABEL"] = f"{self.schema.name} v{self.version}"
        self.source = "\n".join(self.chunks)
        return self.source

    def build(self):
        """(decoder, source): the decoder compiled ahead of time from this very source
        (kwire.codec.aot), else the source compiled and executed here."""
        source = self.generate()
        schema = self.schema
        functions = compiled_decoder(schema.api_key, schema.kind, schema.name, self.version, source, self.namespace)
        if functions is None:
            code = compiled_code(source, f"<kwire {self.schema.name} v{self.version}>")
            exec(code, self.namespace)  # our own generated source; never captured data
            functions = self.namespace
        for table in self.tag_tables:
            for tag, (field_name, reader) in table.items():
                table[tag] = (field_name, functions[reader])
        return functions[self.top], source


# Keyed by the schema object's identity: schemas are module constants, and hashing a whole frozen
# schema tree on every message would cost more than decoding a small one.
_COMPILED: dict[tuple[int, int, bool], tuple[MessageSchema, object, str]] = {}
_DECODERS: dict[tuple[int, int, bool], object] = {}


def _compiled(schema: MessageSchema, version: int, lenient: bool = False):
    key = (id(schema), version, lenient)
    hit = _COMPILED.get(key)
    if hit is None:
        fn, source = _Generator(schema, version, lenient).build()
        hit = _COMPILED[key] = (schema, fn, source)
    return hit[1], hit[2]


def decoder_for(schema: MessageSchema, version: int, lenient: bool = False):
    """The decoder of `schema` at `version`: decode(buf, pos=0) -> (dict, end_pos). Cached. `lenient`: one
    that reads a null as None in every field, nullable or not (to show a body its strict decoder stopped at
    with NullNotNullable)."""
    key = (id(schema), version, lenient)
    cached = _DECODERS.get(key)
    if cached is not None:
        return cached
    if version not in schema.valid:
        raise DecodeError(f"{schema.name} has no version {version}")
    decode, _ = _compiled(schema, version, lenient)
    _DECODERS[key] = decode
    return decode


def decoder_source(schema: MessageSchema, version: int, lenient: bool = False) -> str:
    """The generated source, for debugging and tests."""
    return _compiled(schema, version, lenient)[1]
