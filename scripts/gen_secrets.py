#!/usr/bin/env python3
"""Generate kwire/codec/kafka_configs.py: which configuration names Kafka defines, and which hold secrets.

    python scripts/gen_secrets.py --git KAFKA_GIT_DIR REV [REV ...] [--check] [--jar KAFKA_CLIENTS_JAR]

Each REV is a revision of an apache/kafka git directory (a bare one will do: it is read with `git show`,
never checked out), e.g. refs/tags/3.8.0 refs/heads/3.9 refs/heads/trunk. The generator reads every Java
and Scala source under a module's src/main (EXCLUDED: benchmarks, examples, test kits) and finds Kafka's
configuration definitions: ConfigDef's `define(NAME, TYPE, ...)` and `defineInternal(...)` calls and
`new ConfigKey(NAME, TYPE, ...)`. A NAME is resolved to its text from the string constants it names
(`static final String X_CONFIG = "..."`, a Scala `val`, concatenations with prefix constants, through
static imports, Scala imports, inheritance and, last, a constant name every definition of which agrees).
It writes the union over the revisions:
- PASSWORD_CONFIGS, every name defined with Type.PASSWORD (the configurations Kafka itself treats as
  sensitive: DescribeConfigs nulls their values and marks them IsSensitive);
- OTHER_CONFIGS, every name defined with another type (never one PASSWORD_CONFIGS holds), so kwire can
  show the values of the names Kafka knows are not secrets and redact unknown ones that read like one.

Only the names are written (facts), no text of Kafka's files. The module's header says how it was made:
the command, each revision's commit, and a digest of the files read. `--check` writes nothing and exits 1
when the committed module differs from a fresh generation (a test runs it with KWIRE_KAFKA_GIT=DIR and
KWIRE_KAFKA_REVS="REV REV ..."). Definitions whose name cannot be resolved (a loop variable, a method's
argument) are counted and, for PASSWORD ones, listed in the header: a secret the generator misses says so.

`--jar PATH` cross-checks against a built client (kafka-clients-*.jar): a tiny Java program (Java 11+,
javac on PATH) prints ProducerConfig, ConsumerConfig and AdminClientConfig's definitions, and every
PASSWORD name they list must be in PASSWORD_CONFIGS and every other name in OTHER_CONFIGS (exit 1 if not).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "kwire" / "codec" / "kafka_configs.py"
# Modules whose configurations no cluster, client or connector reads: benchmarks, examples, test kits.
EXCLUDED = ("jmh-benchmarks/", "trogdor/", "test-common/", "examples/", "streams/examples/",
            "streams/quickstart/", "streams/test-utils/", "connect/test-plugins/", "generator/", "shell/",
            "tests/", "system_test/")
TYPES = frozenset({"BOOLEAN", "STRING", "INT", "SHORT", "LONG", "DOUBLE", "LIST", "CLASS", "PASSWORD"})
DEFINERS = frozenset({"define", "defineInternal"})


# -- reading Java and Scala ------------------------------------------------------------------------

_TOKEN = re.compile(r'''
    (?P<ws>\s+) | (?P<line>//[^\n]*) | (?P<block>/\*.*?\*/) | (?P<text>""".*?""")
  | (?P<str>"(?:[^"\\\n]|\\.)*") | (?P<chr>'(?:[^'\\\n]|\\.)')
  | (?P<id>[A-Za-z_$][A-Za-z0-9_$]*) | (?P<num>\d[\w.]*) | (?P<op>.)
''', re.S | re.X)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "0": "\0", "s": " "}


@dataclass(frozen=True)
class Tok:
    kind: str  # "str", "id", "op", "num"
    text: str  # a string literal's value, unescaped
    line: int


def unescape(body: str) -> str:
    out, i = [], 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            n = body[i + 1]
            if n == "u":
                j = i + 1
                while j < len(body) and body[j] == "u":
                    j += 1
                out.append(chr(int(body[j:j + 4], 16)))
                i = j + 4
                continue
            out.append(_ESCAPES.get(n, n))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def tokens(source: str) -> list[Tok]:
    out, line = [], 1
    for m in _TOKEN.finditer(source):
        kind, text = m.lastgroup, m.group()
        if kind == "str":
            out.append(Tok("str", unescape(text[1:-1]), line))
        elif kind == "text":
            out.append(Tok("str", text[3:-3], line))
        elif kind in ("id", "op", "num", "chr"):
            out.append(Tok("op" if kind == "chr" else kind, text, line))
        line += text.count("\n")
    return out


# -- one source file: its package, imports, parents, constants and definitions ----------------------

@dataclass
class Source:
    path: str
    package: str = ""
    classes: set[str] = field(default_factory=set)
    parents: set[str] = field(default_factory=set)  # simple names of the classes it extends or implements
    imports: dict[str, str] = field(default_factory=dict)  # simple name -> class it names (Class or Class.CONST)
    wildcards: set[str] = field(default_factory=set)  # classes whose members are all imported
    constants: dict[str, list[tuple[str, list[Tok]]]] = field(default_factory=dict)  # NAME -> [(class, expression)]
    definitions: list[tuple[list[Tok], str, int, str | None]] = field(default_factory=list)  # (name, type, line, class)


_KEYWORDS = frozenset({"class", "interface", "enum", "object", "trait", "record"})
_MODIFIERS = frozenset({"public", "private", "protected", "static", "final", "override", "lazy", "transient",
                        "volatile"})


def read_source(path: str, text: str) -> Source:
    toks = tokens(text)
    src = Source(path)
    scala = path.endswith(".scala")
    stack: list[tuple[str, int]] = []  # (class name, brace depth of its body)
    pending: str | None = None
    depth = 0
    i = 0
    while i < len(toks):
        t = toks[i]
        if t.text == "package" and t.kind == "id" and not src.package:
            src.package, i = _dotted(toks, i + 1)
            continue
        if t.text == "import" and t.kind == "id" and depth <= 1:
            i = _import(src, toks, i + 1, scala)
            continue
        if t.kind == "id" and t.text in _KEYWORDS and i + 1 < len(toks) and toks[i + 1].kind == "id":
            pending = toks[i + 1].text
            src.classes.add(pending)
            i = _parents(src, toks, i + 2)
            continue
        if t.text == "{":
            depth += 1
            if pending is not None:
                stack.append((pending, depth))
                pending = None
        elif t.text == "}":
            if stack and stack[-1][1] == depth:
                stack.pop()
            depth -= 1
        elif t.kind == "id":
            if stack and stack[-1][1] == depth:
                i = _constant(src, toks, i, stack[-1][0], scala)
            _definition(src, toks, i, stack[-1][0] if stack else None)
        i += 1
    return src


def _dotted(toks: list[Tok], i: int) -> tuple[str, int]:
    """A dotted name from toks[i] (`a.b.C`, `a.b.*`, Scala's `a.b._`): names and dots alternating."""
    parts = []
    while i < len(toks) and (toks[i].kind == "id" or toks[i].text in ("*", "_")):
        parts.append(toks[i].text)
        i += 1
        if i + 1 < len(toks) and toks[i].text == "." and (toks[i + 1].kind == "id" or toks[i + 1].text in "*_"):
            parts.append(".")
            i += 1
        else:
            break
    return "".join(parts), i


def _import(src: Source, toks: list[Tok], i: int, scala: bool) -> int:
    if i < len(toks) and toks[i].text == "static":
        i += 1
    name, i = _dotted(toks, i)
    name = name.rstrip(".")
    if scala and i < len(toks) and toks[i].text == "{":  # import a.b.C.{X, Y => Z}
        j = i + 1
        while j < len(toks) and toks[j].text != "}":
            if toks[j].kind == "id":
                src.imports[toks[j].text] = f"{name}.{toks[j].text}"
            elif toks[j].text == "_":
                src.wildcards.add(name.rpartition(".")[2])
            j += 1
        return j + 1
    last = name.rpartition(".")[2]
    if last in ("*", "_"):
        src.wildcards.add(name.rpartition(".")[0].rpartition(".")[2])
    elif last:
        src.imports[last] = name
    return i


def _parents(src: Source, toks: list[Tok], i: int) -> int:
    """After `class Name`: the simple names it extends or implements, up to its body (or its end)."""
    j = i
    while j < len(toks) and toks[j].text not in ("{", ";") and j - i < 200:
        if toks[j].text in ("extends", "implements", "with") and j + 1 < len(toks):
            name, _ = _dotted(toks, j + 1)
            src.parents.add(name.rpartition(".")[2])
        elif toks[j].text == "," and j + 1 < len(toks) and toks[j + 1].kind == "id":
            name, _ = _dotted(toks, j + 1)
            src.parents.add(name.rpartition(".")[2])
        j += 1
    return i


def _constant(src: Source, toks: list[Tok], i: int, owner: str, scala: bool) -> int:
    """A string constant at class level: Java `static final String X = ...;`, Scala `val X = ...`."""
    t = toks[i]
    if scala and t.text in ("val", "var") and i + 2 < len(toks) and toks[i + 1].kind == "id":
        j = i + 2
        if toks[j].text == ":":
            j += 2 if j + 1 < len(toks) and toks[j + 1].text == "String" else 10**9
        if j < len(toks) and toks[j].text == "=":
            expr = _scala_expression(toks, j + 1)
            src.constants.setdefault(toks[i + 1].text, []).append((owner, expr))
            return j + len(expr)
        return i
    if not scala and t.text == "String" and i + 2 < len(toks) and toks[i + 1].kind == "id" and toks[i + 2].text == "=":
        mods = set()
        k = i - 1
        while k >= 0 and toks[k].kind == "id" and toks[k].text in _MODIFIERS:
            mods.add(toks[k].text)
            k -= 1
        if {"static", "final"} <= mods or (not mods and k >= 0 and toks[k].text in (";", "{", "}")):
            expr = _java_expression(toks, i + 3)
            src.constants.setdefault(toks[i + 1].text, []).append((owner, expr))
            return i + 2 + len(expr)
    return i


def _java_expression(toks: list[Tok], i: int) -> list[Tok]:
    out, level = [], 0
    while i < len(toks) and not (level == 0 and toks[i].text in (";", ",")):
        level += {"(": 1, ")": -1}.get(toks[i].text, 0)
        if level < 0:
            break
        out.append(toks[i])
        i += 1
    return out


def _scala_expression(toks: list[Tok], i: int) -> list[Tok]:
    """A Scala val's right side: the tokens of its line, and of the next while a line ends or starts with +."""
    out = []
    line = toks[i].line if i < len(toks) else 0
    while i < len(toks) and toks[i].text not in (";", "{", "}"):  # a block is no constant: left to the caller
        t = toks[i]
        if t.line != line:
            if not ((out and out[-1].text == "+") or t.text == "+"):
                break
            line = t.line
        out.append(t)
        i += 1
    return out


def _definition(src: Source, toks: list[Tok], i: int, owner: str | None) -> None:
    t = toks[i]
    if t.text in DEFINERS and i + 1 < len(toks) and toks[i + 1].text == "(":
        start = i + 2
    elif t.text == "ConfigKey" and i > 0 and toks[i - 1].text in ("new", ".") and i + 1 < len(toks) \
            and toks[i + 1].text == "(":
        start = i + 2
    else:
        return
    name = _java_expression(toks, start)
    j = start + len(name)
    if j >= len(toks) or toks[j].text != ",":
        return
    kind = _java_expression(toks, j + 1)
    if kind and kind[-1].kind == "id" and kind[-1].text in TYPES and all(
            k.kind == "id" or k.text == "." for k in kind):
        src.definitions.append((name, kind[-1].text, t.line, owner))


# -- resolving names ---------------------------------------------------------------------------------

class Resolver:
    """The text of constant expressions, across every source of one revision."""

    def __init__(self, sources: list[Source]):
        self.by_class: dict[str, list[Source]] = {}
        self.by_name: dict[str, list[Source]] = {}
        for s in sources:
            for c in s.classes:
                self.by_class.setdefault(c, []).append(s)
            for n in s.constants:
                self.by_name.setdefault(n, []).append(s)
        self.used: set[str] = set()  # the paths whose constants a resolved name came from
        self._busy: set[tuple[str, str]] = set()

    def value(self, expr: list[Tok], src: Source, owner: str | None) -> str | None:
        """`expr` (literals, constant names, +, parentheses), written in class `owner` of `src`, as text;
        None when it is anything else (a method call, a number, a name not resolved)."""
        parts, i = [], 0
        while i < len(expr):
            t = expr[i]
            if t.kind == "str":
                parts.append(t.text)
                i += 1
            elif t.kind == "id":
                dotted, j = _dotted(expr, i)
                if j < len(expr) and expr[j].text == "(":
                    return None  # a method call
                v = self.reference(dotted, src, owner)
                if v is None:
                    return None
                parts.append(v)
                i = j
            elif t.text in ("+", "(", ")"):
                i += 1
            else:
                return None
        return "".join(parts) if parts else None

    def reference(self, dotted: str, src: Source, owner: str | None) -> str | None:
        qualifier, _, name = dotted.rpartition(".")
        if qualifier:
            return self._in_class(name, qualifier.rpartition(".")[2], src)
        if name in src.constants:  # the class's own constant first, then another class's of the same file
            v = self._evaluate(src, name, owner)
            if v is None and owner is not None:
                v = self._evaluate(src, name, None)
            if v is not None:
                return v
        target = src.imports.get(name)
        if target is not None:  # import static a.b.C.NAME
            return self._in_class(name, target.rpartition(".")[0].rpartition(".")[2], src)
        for cls in sorted(src.wildcards | src.parents):
            v = self._in_class(name, cls, src)
            if v is not None:
                return v
        return self._agreed(name)

    def _classes(self, cls: str, src: Source) -> list[Source]:
        found = self.by_class.get(cls, [])
        imported = src.imports.get(cls)
        if len(found) > 1 and imported:  # two classes of one simple name: the one imported
            found = [s for s in found if imported.startswith(s.package + ".")] or found
        elif len(found) > 1:
            found = [s for s in found if s.package == src.package] or found
        return found

    def _in_class(self, name: str, cls: str, src: Source, depth: int = 0) -> str | None:
        """Constant `name` of class `cls` (as `src` sees it), or of a class it extends."""
        sources = self._classes(cls, src)
        values = {self._evaluate(s, name, cls) for s in sources if name in s.constants} - {None}
        if len(values) == 1:
            return values.pop()
        if values or depth > 8:
            return None
        for s in sources:
            for parent in sorted(s.parents - s.classes):
                v = self._in_class(name, parent, s, depth + 1)
                if v is not None:
                    return v
        return None

    def _agreed(self, name: str) -> str | None:
        values = {self._evaluate(s, name, None) for s in self.by_name.get(name, ())} - {None}
        return values.pop() if len(values) == 1 else None

    def _evaluate(self, src: Source, name: str, owner: str | None) -> str | None:
        """The one text the constants `name` of `src` (of class `owner`, if given) have, or None."""
        values = set()
        for cls, expr in src.constants.get(name, ()):
            key = (src.path, name, cls)
            if (owner is not None and cls != owner) or key in self._busy:
                continue
            self._busy.add(key)
            try:
                v = self.value(expr, src, cls)
            finally:
                self._busy.discard(key)
            if v is not None:
                values.add(v)
        if len(values) != 1:
            return None
        self.used.add(src.path)
        return values.pop()


# -- one revision ------------------------------------------------------------------------------------

@dataclass
class Found:
    types: dict[str, set[str]] = field(default_factory=dict)  # config name -> the types it is defined with
    unresolved: list[str] = field(default_factory=list)  # "TYPE path:line" of each name not resolved
    files: dict[str, str] = field(default_factory=dict)  # path -> SHA-256 of the files read
    password_files: set[str] = field(default_factory=set)  # the paths with a PASSWORD definition


def git(git_dir: str, *args: str, data: bytes | None = None) -> bytes:
    return subprocess.run(["git", "--git-dir", git_dir, *args], input=data, capture_output=True,
                          check=True).stdout


def revision_sources(git_dir: str, rev: str) -> dict[str, bytes]:
    """Every Java and Scala file under a src/main of `rev`, by path, less EXCLUDED modules."""
    listing = git(git_dir, "ls-tree", "-r", "--format=%(objectname) %(path)", rev).decode().splitlines()
    wanted = [(sha, path) for sha, _, path in (line.partition(" ") for line in listing)
              if "/src/main/" in path and path.endswith((".java", ".scala")) and not path.startswith(EXCLUDED)]
    batch = git(git_dir, "cat-file", "--batch", data="".join(f"{sha}\n" for sha, _ in wanted).encode())
    out, pos = {}, 0
    for _, path in wanted:
        header_end = batch.index(b"\n", pos)
        size = int(batch[pos:header_end].split()[2])
        out[path] = batch[header_end + 1:header_end + 1 + size]
        pos = header_end + 1 + size + 1
    return out


_parsed: dict[bytes, Source] = {}


def scan(git_dir: str, rev: str) -> Found:
    files = revision_sources(git_dir, rev)
    sources = []
    for path, data in files.items():
        digest = hashlib.sha256(data).digest()
        if digest not in _parsed:
            _parsed[digest] = read_source(path, data.decode("utf-8", "replace"))
        src = _parsed[digest]
        if src.path != path:
            src = Source(path, src.package, src.classes, src.parents, src.imports, src.wildcards, src.constants,
                         src.definitions)
        sources.append(src)
    resolver = Resolver(sources)
    found = Found()
    definers = set()
    for src in sources:
        for expr, kind, line, owner in src.definitions:
            definers.add(src.path)
            if kind == "PASSWORD":
                found.password_files.add(src.path)
            name = resolver.value(expr, src, owner)
            if name is None:
                found.unresolved.append(f"{kind} {src.path}:{line}")
            else:
                found.types.setdefault(name, set()).add(kind)
    read = sorted(definers | resolver.used)
    found.files = {p: hashlib.sha256(files[p]).hexdigest() for p in read}
    return found


# -- the module ----------------------------------------------------------------------------------------

def names_block(name: str, names: list[str], width: int = 116) -> list[str]:
    lines, line = [f"{name} = frozenset({{"], "   "
    for n in names:
        piece = f" {n!r},"
        if len(line) + len(piece) > width:
            lines.append(line)
            line = "   "
        line += piece
    if line.strip():
        lines.append(line)
    return lines + ["})"]


def digest_of(files: dict[str, str]) -> str:
    return hashlib.sha256("".join(f"{p} {d}\n" for p, d in sorted(files.items())).encode()).hexdigest()


def command_lines(revs: list[str], width: int = 104) -> list[str]:
    """The command that made the module, wrapped: `    python scripts/gen_secrets.py --git KAFKA_GIT_DIR \\`."""
    lines, line = [], "    python scripts/gen_secrets.py --git KAFKA_GIT_DIR"
    for rev in revs:
        if len(line) + len(rev) + 1 > width:
            lines.append(line + " \\")
            line = "       "
        line += " " + rev
    return lines + [line]


def module_source(revs: list[tuple[str, str, Found]]) -> str:
    types: dict[str, set[str]] = {}
    for _, _, found in revs:
        for name, kinds in found.types.items():
            types.setdefault(name, set()).update(kinds)
    secret = sorted(n for n, k in types.items() if "PASSWORD" in k)
    other = sorted(n for n, k in types.items() if "PASSWORD" not in k)
    doc = ['"""Kafka\'s configuration names: the ones defined with Type.PASSWORD (secrets) and all the others.',
           "",
           "GENERATED by scripts/gen_secrets.py from the ConfigDef definitions (define, defineInternal, ConfigKey) in",
           "the Java and Scala sources of apache/kafka; do not edit. Only names are here, no text of Kafka's. "
           "Made with",
           *command_lines([r for r, _, _ in revs]),
           "and checked with --check (the same command). The revisions read: their commit, how many source files",
           "gave a definition or a constant it names, the SHA-256 of those files' paths and SHA-256s, and how many",
           "definitions have a name that is not a constant (a loop variable, a method's result: not listed):"]
    for rev, commit, found in revs:
        doc.append(f"    {rev} {commit[:12]} {len(found.files)} files {digest_of(found.files)[:16]}, "
                   f"{len(found.unresolved)} not constant")
    doc.append("The files that define a PASSWORD config, with the SHA-256 of the newest copy that does:")
    for path, sha in _password_files(revs):
        doc.append(f"    {path} {sha[:16]}")
    missed = sorted({u for _, _, f in revs for u in f.unresolved if u.startswith("PASSWORD ")})
    doc.append(f"PASSWORD definitions whose name is not a constant (not in the list): {len(missed)}"
               + ("" if missed else "."))
    doc += [f"    {m.partition(' ')[2]}" for m in missed]
    doc += [f"{len(secret)} PASSWORD names, {len(other)} others.", '"""', ""]
    body = names_block("PASSWORD_CONFIGS", secret) + [""] + names_block("OTHER_CONFIGS", other)
    return "\n".join(doc + body) + "\n"


def _password_files(revs) -> list[tuple[str, str]]:
    newest: dict[str, str] = {}
    for _, _, found in revs:
        for path in found.password_files:
            newest[path] = found.files[path]
    return sorted(newest.items())


# -- the reference client -------------------------------------------------------------------------------

JAVA = """
import org.apache.kafka.common.config.ConfigDef;
public class ListKafkaConfigs {
    public static void main(String[] args) throws Exception {
        String[] classes = {"org.apache.kafka.clients.producer.ProducerConfig",
            "org.apache.kafka.clients.consumer.ConsumerConfig", "org.apache.kafka.clients.admin.AdminClientConfig"};
        for (String c : classes) {
            ConfigDef def = (ConfigDef) Class.forName(c).getMethod("configDef").invoke(null);
            for (ConfigDef.ConfigKey key : def.configKeys().values())
                System.out.println(key.type + " " + key.name);
        }
    }
}
"""


def jar_configs(jar: str) -> dict[str, set[str]]:
    """The client jar's configuration names by type (javac and java on PATH)."""
    cp = os.pathsep.join([jar] + [str(p) for p in Path(jar).parent.glob("slf4j-api*.jar")])
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "ListKafkaConfigs.java").write_text(JAVA)
        subprocess.run(["javac", "-cp", cp, "-d", tmp, str(Path(tmp, "ListKafkaConfigs.java"))], check=True)
        out = subprocess.run(["java", "-cp", cp + os.pathsep + tmp, "ListKafkaConfigs"], capture_output=True,
                             text=True, check=True).stdout
    by_type: dict[str, set[str]] = {}
    for line in out.splitlines():
        kind, _, name = line.partition(" ")
        by_type.setdefault(kind, set()).add(name)
    return by_type


def check_jar(jar: str, secret: frozenset[str], other: frozenset[str]) -> list[str]:
    by_type = jar_configs(jar)
    problems = [f"PASSWORD {n}: not in PASSWORD_CONFIGS" for n in sorted(by_type.pop("PASSWORD", set()) - secret)]
    for kind, names in sorted(by_type.items()):
        problems += [f"{kind} {n}: not in OTHER_CONFIGS" for n in sorted(names - other)]
    return problems


def generate(git_dir: str, names: list[str], check: bool) -> int:
    """Read `names` (revisions) of `git_dir`, then write the module, or with `check` compare it (1: differs)."""
    revs = []
    for rev in names:
        commit = git(git_dir, "rev-parse", "--verify", f"{rev}^{{commit}}").decode().strip()
        found = scan(git_dir, commit)
        print(f"{rev}: {len(found.types)} names, {len(found.unresolved)} definitions unresolved", file=sys.stderr)
        revs.append((rev, commit, found))
    text = module_source(revs)
    if OUT.exists() and OUT.read_text() == text:
        return 0
    if check:
        print(f"differs: {os.path.relpath(OUT, ROOT)}")
        return 1
    OUT.write_text(text)
    print(f"wrote: {os.path.relpath(OUT, ROOT)}")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--git", help="an apache/kafka git directory (bare is fine)")
    parser.add_argument("revs", nargs="*", help="revisions to read, e.g. refs/tags/3.8.0 refs/heads/trunk")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if the module would change")
    parser.add_argument("--jar", help="a kafka-clients jar whose definitions must all be in the lists")
    args = parser.parse_args(argv)
    if bool(args.git) != bool(args.revs) or not (args.git or args.jar):
        parser.error("give --git and revisions to generate (or check), --jar to check against a client, or both")
    status = generate(args.git, args.revs, args.check) if args.git else 0
    if args.jar:
        namespace: dict = {}
        exec(compile(OUT.read_text(), str(OUT), "exec"), namespace)
        problems = check_jar(args.jar, namespace["PASSWORD_CONFIGS"], namespace["OTHER_CONFIGS"])
        for p in problems:
            print(f"{args.jar}: {p}")
        print(f"{args.jar}: {'agrees' if not problems else f'{len(problems)} names missing'}", file=sys.stderr)
        status = status or (1 if problems else 0)
    return status


if __name__ == "__main__":
    sys.exit(main())
