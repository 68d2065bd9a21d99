"""The pin of Kafka's message definitions: scripts/kafka_spec.json, what the schemas are made from.

The pin names each source (a release branch or tag of apache/kafka, then trunk), the commit it was read at
and the SHA-256 of every file of its definition folder. This module reads the sources it names (from a git
directory at the pinned commits, or from folders holding the same files) and stops, with one line, at a
file whose digest is not the pinned one; writes a new pin from refs of a git directory; and says how the
generated files name it (the sources, and a stamp with the pin's own SHA-256 and the trunk commit).
scripts/gen_schemas.py is its one user.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PIN = ROOT / "scripts" / "kafka_spec.json"
FOLDER = "clients/src/main/resources/common/message"


def read_folder(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.glob("*.json"))}


def read_git(git_dir: str, commit: str) -> dict[str, bytes]:
    """The definition files of `commit` of an apache/kafka git directory (bare is fine), never checked out."""
    def git(*args, data=None):
        return subprocess.run(["git", f"--git-dir={git_dir}", *args], input=data, capture_output=True,
                              check=True).stdout
    entries = [line.split(None, 3) for line in git("ls-tree", f"{commit}:{FOLDER}").decode().splitlines()]
    entries = [(e[3], e[2]) for e in entries if e[1] == "blob" and e[3].endswith(".json")]
    batch = git("cat-file", "--batch", data="".join(f"{obj}\n" for _, obj in entries).encode())
    files, pos = {}, 0
    for name, _ in entries:
        end = batch.index(b"\n", pos)
        size = int(batch[pos:end].split()[2])
        files[name] = batch[end + 1:end + 1 + size]
        pos = end + 2 + size
    return files


def load_pin(path: Path | None = None) -> dict:
    return json.loads((path or PIN).read_text())


def pin_digest(path: Path | None = None) -> str:
    """The SHA-256 of the pin file's bytes (`sha256sum scripts/kafka_spec.json`)."""
    return hashlib.sha256((path or PIN).read_bytes()).hexdigest()


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def verify(source: dict, files: dict[str, bytes]) -> None:
    """Stop, with one line, unless `files` are exactly the pinned files of `source`, digest for digest."""
    pinned = source.get("files")
    where = f"{os.path.relpath(PIN, ROOT)}: source {source['name']}"
    if not pinned:
        raise SystemExit(f"{where} has no file digests pinned (see its note); pin it anew with --pin")
    wrong = [f"{n}: sha256 {sha256(files[n])[:16]} read, {pinned[n][:16]} pinned"
             for n in sorted(files.keys() & pinned.keys()) if sha256(files[n]) != pinned[n]]
    wrong += [f"{n}: read, not pinned" for n in sorted(files.keys() - pinned.keys())]
    wrong += [f"{n}: pinned, not read" for n in sorted(pinned.keys() - files.keys())]
    if wrong:
        raise SystemExit(f"{where}: {wrong[0]}" + (f" (and {len(wrong) - 1} more)" if len(wrong) > 1 else ""))


def pinned_sources(pin: dict, git_dir: str | None, folders: list[Path] | None) -> list[dict[str, bytes]]:
    """Every pinned source's files, read from git at the pinned commit or from the folders, verified."""
    sources = pin["sources"]
    if folders is not None and len(folders) != len(sources):
        raise SystemExit(f"{len(folders)} folders given, the pin has {len(sources)} sources: "
                         + ", ".join(s["name"] for s in sources))
    out = []
    for i, source in enumerate(sources):
        if folders is not None:
            files = read_folder(folders[i])
        elif not source.get("commit"):
            raise SystemExit(f"{os.path.relpath(PIN, ROOT)}: source {source['name']} has no commit pinned "
                             "(see its note); pin it anew with --pin")
        else:
            files = read_git(git_dir, source["commit"])
        verify(source, files)
        out.append(files)
    return out


def make_pin(git_dir: str, pairs: list[str], note: str) -> dict:
    """A pin of the NAME=REF sources of `git_dir`: each ref's commit, its date and its files' digests."""
    sources = []
    for pair in pairs:
        name, _, ref = pair.partition("=")
        def git(*args):
            return subprocess.run(["git", f"--git-dir={git_dir}", *args], capture_output=True, check=True,
                                  text=True).stdout.strip()
        commit = git("rev-parse", "--verify", f"{ref}^{{commit}}")
        files = read_git(git_dir, commit)
        sources.append({"name": name, "ref": ref, "commit": commit, "date": git("log", "-1", "--format=%cs", commit),
                        "files": {n: sha256(files[n]) for n in sorted(files)}})
    return {"about": PIN_ABOUT, "repository": "apache/kafka", "folder": FOLDER, "note": note, "sources": sources}


PIN_ABOUT = ("What kwire/codec/schemas, the api table of kwire/kafka/apis.py and docs/apis.md are generated from"
             " (scripts/gen_schemas.py reads it): Kafka's message definitions of these sources, oldest first,"
             " each at its commit, each file with its SHA-256. Facts only.")


def write_pin(pin: dict, path: Path | None = None) -> None:
    """One source a block, one file a line: a new pin's diff reads file by file."""
    head = [f"  {json.dumps(k)}: {json.dumps(pin[k])}," for k in ("about", "repository", "folder", "note")]
    blocks = []
    for source in pin["sources"]:
        keys = [k for k in ("name", "ref", "commit", "date", "note") if k in source]
        lines = ["    {" + ", ".join(f"{json.dumps(k)}: {json.dumps(source[k])}" for k in keys) + ","]
        files = source.get("files")
        if not files:
            lines.append('     "files": null}')
        else:
            lines.append('     "files": {')
            lines += [f"      {json.dumps(n)}: {json.dumps(d)}," for n, d in files.items()]
            lines[-1] = lines[-1].rstrip(",")
            lines.append("     }}")
        blocks.append("\n".join(lines))
    (path or PIN).write_text("{\n" + "\n".join(head) + '\n  "sources": [\n' + ",\n".join(blocks) + "\n  ]\n}\n")


def source_label(pin: dict) -> str:
    """How the generated files name the sources: "apache/kafka 3.9, 4.0 and trunk (2026-08-13)"."""
    names = [s["name"] + (f" ({s['date']})" if s["name"] == "trunk" and s.get("date") else "") for s in pin["sources"]]
    return f"{pin['repository']} " + (", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0])


def stamp(pin: dict, digest: str) -> str:
    """The line every generated file carries: which pin, and the trunk commit it names."""
    trunk = next((s for s in pin["sources"] if s["name"] == "trunk"), pin["sources"][-1])
    commit = trunk["commit"][:12] if trunk.get("commit") else "not recorded"
    return f"pinned in scripts/kafka_spec.json (sha256 {digest[:16]}; trunk commit {commit})"
