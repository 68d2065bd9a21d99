"""Compile a message schema, for one version, into a fast decoder.

`decoder_for(schema, version)` generates Python source for every struct of the message as it is in
that version (fields absent from the version vanish, runs of fixed-width fields become one
struct.unpack_from, flexible versions switch to compact lengths and tagged-field sections) and
compiles it once; the result is cached per (schema, version).

A decoder is `decode(buf, pos) -> (dict, pos)`. The dict uses Kafka's field names. Values:
int, bool, float, str, None, list, dict; uuid -> Kafka's base64 text; bytes -> bytes;
records -> kwire.codec.values.RawRecords (lazy: decoded later only if asked). Tagged fields that
the schema does not know are kept as raw bytes under "_unknown_tagged_fields" {tag: hex}.

Guarantees: never reads past `buf`; every length read from the wire is checked against the bytes
left before anything is allocated (an array claiming 2**31 elements in 30 bytes fails at once);
any malformation raises DecodeError with the offset and the field's path, nothing else. One body makes
at most MAX_BODY_ENTRIES entries (an element of an array of structs, strings, bytes or uuids counts 1,
eight numbers count 1): past it BodyTooLarge (a DecodeError kwire raises by choice, not for a
malformation), so a well-formed answer of a million configs costs a bound, not gigabytes.

The compiled code objects are also kept on disk (kwire.codec.code_cache): later runs skip compiling.
"""

from __future__ import annotations

import os
import struct

from kwire.codec.code_cache import compiled_code
from kwire.kafka.primitives import kafka_uuid, read_uvarint
from kwire.codec.schema import Field, MessageSchema
from kwire.codec.values import RawRecords
from kwire.errors import BodyTooLarge, DecodeError


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
    return DecodeError(f"need {need} bytes, {max(have, 0)} left", pos, field=what)


def _uvar(buf, pos):
    b = buf[pos]
    if b < 0x80:
        return b, pos + 1
    return read_uvarint(buf, pos)


def _tagged_section(buf, pos, end, out, table, what):
    """A tagged-field section with at least one field: known tags are read by their readers (each
    confined to its declared size), unknown ones kept as hex under "_unknown_tagged_fields"."""
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
    return pos


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
    "DecodeError": DecodeError,
    "_unpack_from": struct.unpack_from,
    "_read_uvarint": read_uvarint,
    "_I16": _I16,
    "_I32": _I32,
    "_RawRecords": RawRecords,
    "_LEFT": _ENTRIES_LEFT,
    "_too_many": _too_many,
}


class _Generator:
    """Emits the source of one (message, version): a function per struct, plus reader helpers."""

    def __init__(self, schema: MessageSchema, version: int):
        self.schema = schema
        self.version = version
        self.flexible = schema.is_flexible(version)
        self.namespace: dict[str, object] = dict(_RUNTIME)
        self.chunks: list[str] = []
        self.counter = 0
        self.tag_tables: list[dict] = []  # {tag: (field name, reader function name)}, resolved after exec

    def fresh(self, stem: str) -> str:
        self.counter += 1
        return f"_{stem}_{self.counter}"

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

    # -- code for one value

    def value_code(self, field: Field, path: str, indent: str, target: str) -> list[str]:
        """Lines that read one value of `field` at `pos` into `target`, advancing `pos`."""
        if field.is_array:
            return self.array_code(field, path, indent, target)
        if field.is_struct:
            return self.struct_value_code(field, path, indent, target)
        t = field.type
        if t in ("string", "bytes", "records"):
            return self.sized_code(t, repr(path), indent, target)
        if t == "uuid":
            return [f"{indent}{target}, pos = _uuid(buf, pos, end, {path!r})"]
        code, size = _FIXED[t]
        s = self.const("S", struct.Struct(">" + code))
        return [
            f"{indent}if pos + {size} > end: raise _trunc({path!r}, pos, {size}, end - pos)",
            f"{indent}{target} = {s}.unpack_from(buf, pos)[0]; pos += {size}",
        ]

    def array_code(self, field: Field, path: str, indent: str, target: str) -> list[str]:
        """An array: its length (checked against the bytes left at the smallest element size), then
        its elements (structs through their function, fixed-width numbers in one unpack)."""
        what = repr(path)
        elem = field.element_type
        lines = self.length_code(indent, "_n", what, self.flexible, 4)
        lines.append(f"{indent}if _n > 0 and _n * {self.elem_min_size(field)} > end - pos:")
        lines.append(f"{indent}    raise DecodeError(f\"{{_n}} elements cannot fit in {{end - pos}} bytes\", pos, {what})")
        cost = "_n >> 3" if elem in _FIXED and elem != "uuid" and not field.is_struct else "_n"
        lines.append(f"{indent}_LEFT[0] -= {cost}")
        lines.append(f"{indent}if _LEFT[0] < 0: raise _too_many({what}, pos)")
        lines.append(f"{indent}if _n < 0:")
        lines.append(f"{indent}    {target} = None")
        lines.append(f"{indent}else:")
        inner = indent + "    "
        if field.is_struct:
            fn = self.struct_function(field.fields or (), path + "[]")
            return lines + [
                f"{inner}{target} = _l = []",
                f"{inner}_ap = _l.append",
                f"{inner}for _ in range(_n):",
                f"{inner}    _x, pos = {fn}(buf, pos, end)",
                f"{inner}    _ap(_x)",
            ]
        if elem in _FIXED and elem not in ("uuid", "bool"):
            code, size = _FIXED[elem]
            return lines + [
                f"{inner}{target} = list(_unpack_from('>%d{code}' % _n, buf, pos))",
                f"{inner}pos += _n * {size}",
            ]
        item = Field(field.name, elem, field.versions, field.nullable, None, field.tagged, None)
        lines += [f"{inner}{target} = _l = []", f"{inner}for _ in range(_n):"]
        lines += self.value_code(item, path + "[]", inner + "    ", "_x")
        lines.append(f"{inner}    _l.append(_x)")
        return lines

    def struct_value_code(self, field: Field, path: str, indent: str, target: str) -> list[str]:
        fn = self.struct_function(field.fields or (), path)
        if field.nullable_in(self.version):
            # A nullable struct is preceded by an int8: -1 null, 1 present.
            return [
                f"{indent}if pos >= end: raise _trunc({path!r}, pos, 1, 0)",
                f"{indent}if buf[pos] == 0xFF:",
                f"{indent}    {target} = None; pos += 1",
                f"{indent}else:",
                f"{indent}    {target}, pos = {fn}(buf, pos + 1, end)",
            ]
        return [f"{indent}{target}, pos = {fn}(buf, pos, end)"]

    def sized_code(self, t: str, what: str, indent: str, target: str) -> list[str]:
        """A string, bytes or records value, inlined: a length (int16 for strings, int32 otherwise; a
        varint of length+1 when flexible), -1 for null, then that many bytes, checked against the end."""
        lines = self.length_code(indent, "_n", what, self.flexible, 2 if t == "string" else 4)
        if t == "string":
            value = "str(buf[pos:_e], 'utf-8', 'replace')"
        elif t == "bytes":
            value = "bytes(buf[pos:_e])"
        else:
            value = "_RawRecords(buf[pos:_e])"
        return lines + [
            f"{indent}if _n < 0:",
            f"{indent}    {target} = None",
            f"{indent}else:",
            f"{indent}    _e = pos + _n",
            f"{indent}    if _e > end: raise _trunc({what}, pos, _n, end - pos)",
            f"{indent}    {target} = {value}",
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

    # -- one struct

    def struct_function(self, fields, path: str) -> str:
        v = self.version
        name = self.fresh("struct")
        regular = [f for f in fields if f.present_in(v) and not (self.flexible and f.tagged_in(v))]
        tagged = [f for f in fields if f.present_in(v) and self.flexible and f.tagged_in(v)]
        body: list[str] = []
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
                names = [f"v{i + k}" for k in range(len(run))]
                what = repr(f"{path}.{run[0].name}" if path else run[0].name)
                body.append(f"    if pos + {size} > end: raise _trunc({what}, pos, {size}, end - pos)")
                body.append(f"    {', '.join(names)}{',' if len(names) == 1 else ''} = {s}.unpack_from(buf, pos)")
                body.append(f"    pos += {size}")
                for k, x in enumerate(run):
                    if x.type == "uuid":
                        body.append(f"    {names[k]} = _kafka_uuid({names[k]})")
                    locals_.append((x.name, names[k]))
                i += len(run)
                continue
            local = f"v{i}"
            body += self.value_code(f, f"{path}.{f.name}" if path else f.name, "    ", local)
            locals_.append((f.name, local))
            i += 1
        items = ", ".join(f"{k!r}: {loc}" for k, loc in locals_)
        body.append(f"    out = {{{items}}}")
        if self.flexible:
            table = {}
            for f in tagged:
                reader = self.tagged_reader(f, f"{path}.{f.name}" if path else f.name)
                table[f.tag] = (f.name, reader)
            t = self.const("TAGS", table)
            self.tag_tables.append(table)
            what = repr(f"{path}.<tagged fields>" if path else "<tagged fields>")
            # The common case, no tagged field at all, costs one byte test; otherwise the shared
            # reader walks the section.
            body += [
                f"    if pos >= end: raise _trunc({what}, pos, 1, 0)",
                "    if buf[pos]:",
                f"        pos = _tagged_section(buf, pos, end, out, {t}, {what})",
                "    else:",
                "        pos += 1",
            ]
        body.append("    return out, pos")
        self.chunks.append(f"def {name}(buf, pos, end):\n" + "\n".join(body) + "\n")
        return name

    def tagged_reader(self, field: Field, path: str) -> str:
        """A function reading a tagged field's value confined to its declared size."""
        name = self.fresh("tag")
        lines = [f"def {name}(buf, pos, end):"]
        lines += self.value_code(field, path, "    ", "val")
        lines.append("    return val")
        self.chunks.append("\n".join(lines) + "\n")
        return name

    def build(self):
        top = self.struct_function(self.schema.fields, "")
        source = "\n".join(self.chunks)
        code = compiled_code(source, f"<kwire {self.schema.name} v{self.version}>")
        exec(code, self.namespace)  # our own generated source; never captured data
        for table in self.tag_tables:
            for tag, (field_name, reader) in table.items():
                table[tag] = (field_name, self.namespace[reader])
        return self.namespace[top], source


# Keyed by the schema object's identity: schemas are module constants, and hashing a whole frozen
# schema tree on every message would cost more than decoding a small one.
_COMPILED: dict[tuple[int, int], tuple[MessageSchema, object, str]] = {}
_DECODERS: dict[tuple[int, int], object] = {}


def _compiled(schema: MessageSchema, version: int):
    key = (id(schema), version)
    hit = _COMPILED.get(key)
    if hit is None:
        fn, source = _Generator(schema, version).build()
        hit = _COMPILED[key] = (schema, fn, source)
    return hit[1], hit[2]


def decoder_for(schema: MessageSchema, version: int):
    """The decoder of `schema` at `version`: decode(buf, pos=0) -> (dict, end_pos). Cached."""
    key = (id(schema), version)
    cached = _DECODERS.get(key)
    if cached is not None:
        return cached
    if version not in schema.valid:
        raise DecodeError(f"{schema.name} has no version {version}")
    fn, _ = _compiled(schema, version)
    label = f"{schema.name} v{version}"

    def decode(buf, pos: int = 0):
        mv = buf if isinstance(buf, memoryview) else memoryview(buf)
        _ENTRIES_LEFT[0] = MAX_BODY_ENTRIES
        try:
            return fn(mv, pos, len(mv))
        except DecodeError as exc:
            raise type(exc)(exc.reason, exc.offset, exc.field, label) from None
        except (struct.error, IndexError, ValueError, OverflowError, MemoryError) as exc:
            raise DecodeError(f"malformed ({exc})", message_name=label) from None

    _DECODERS[key] = decode
    return decode


def decoder_source(schema: MessageSchema, version: int) -> str:
    """The generated source, for debugging and tests."""
    return _compiled(schema, version)[1]
