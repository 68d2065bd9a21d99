#!/usr/bin/env python3
"""Write scripts/kafka_releases.json: the versions of every api key in each Apache Kafka release.

    python scripts/gen_releases.py --git KAFKA_GIT_DIR [--check]

KAFKA_GIT_DIR is an apache/kafka git directory (a bare one will do: it is read with `git cat-file`,
never checked out). The releases read, oldest first:
- every final release tag (X.Y.0; 0.X.Y.0 before 1.0) from 0.9.0, the first whose Java client states every
  api of its time: from 2.2.0 on, from Kafka's message definitions (the folder
  clients/src/main/resources/common/message); before, from the Java client's own schemas (ApiKeys.java and,
  per api, the `Schema[]` it lists one a version: Protocol.java's arrays until 0.11, each request class's
  `schemaVersions()` from 1.0; a null entry, a version only the broker had a schema for, counts);
- a release branch refs/heads/X.Y newer than every such tag and with no X.Y.0 tag yet (a release the
  copy at hand was made before), read at its head and named so;
- refs/heads/trunk, at its head.
Of each, the file records the ref, its commit and date and, per api key, the `validVersions` of the
request definition (the response states the same), followed by " unstable" where the definition marks its
newest version so (`latestVersionUnstable`: defined, not yet served by default): facts only, no text of
Kafka's files.
scripts/gen_schemas.py reads it to say in docs/apis.md which release each version first appeared in.
`--check` writes nothing and exits 1 when the committed file differs from what would be written.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "scripts" / "kafka_releases.json"
FOLDER = "clients/src/main/resources/common/message"
JAVA = "clients/src/main/java/org/apache/kafka/common/"
sys.path.insert(0, str(ROOT / "scripts"))
from gen_schemas import strip_comments  # noqa: E402  (one reader of Kafka's JSON with comments)


def git(git_dir: str, *args: str, data: bytes | None = None) -> bytes:
    return subprocess.run(["git", f"--git-dir={git_dir}", *args], input=data, capture_output=True,
                          check=True).stdout


def release_refs(git_dir: str) -> list[tuple[str, str]]:
    """(name, ref) of the releases to read, oldest first (see the module's text)."""
    lines = git(git_dir, "for-each-ref", "--format=%(refname)", "refs/tags", "refs/heads").decode().split()
    tags = {tuple(map(int, m.groups())): ref for ref in lines
            if (m := re.fullmatch(r"refs/tags/([1-9]\d*)\.(\d+)\.0", ref))}
    old = {(0, int(m.group(1)), int(m.group(2))): ref for ref in lines
           if (m := re.fullmatch(r"refs/tags/0\.(\d+)\.(\d+)\.0", ref)) and int(m.group(1)) >= 9}
    branches = {tuple(map(int, m.groups())): ref for ref in lines
                if (m := re.fullmatch(r"refs/heads/([1-9]\d*)\.(\d+)", ref))}
    newest = max(tags) if tags else (0, 0)
    refs = [(".".join(map(str, v)), old[v]) for v in sorted(old)]
    refs += [(f"{x}.{y}", tags[(x, y)]) for x, y in sorted(tags)]
    refs += [(f"{x}.{y}", branches[(x, y)]) for x, y in sorted(branches) if (x, y) > newest]
    return refs + [("trunk", "refs/heads/trunk")]


def api_versions(git_dir: str, commit: str) -> dict[str, str] | None:
    """Per api key (as text), the request's validVersions at `commit`; None without the folder."""
    listing = git(git_dir, "ls-tree", f"{commit}:{FOLDER}").decode() if _has_folder(git_dir, commit) else ""
    if not listing:
        return java_api_versions(git_dir, commit)
    objects = [line.split()[2] for line in listing.splitlines() if line.endswith("Request.json")]
    batch = git(git_dir, "cat-file", "--batch", data="".join(o + "\n" for o in objects).encode())
    found: dict[int, str] = {}
    pos = 0
    while pos < len(batch):
        header_end = batch.index(b"\n", pos)
        size = int(batch[pos:header_end].split()[2])
        text = strip_comments(batch[header_end + 1:header_end + 1 + size].decode("utf-8")).strip()
        spec, _ = json.JSONDecoder().raw_decode(text)  # the first value: 2.8.0's DescribeProducers has a stray "]}" after it
        pos = header_end + 1 + size + 1
        if spec.get("type") == "request" and "apiKey" in spec:
            found[spec["apiKey"]] = spec["validVersions"].strip() + (" unstable" * bool(spec.get("latestVersionUnstable")))
    return {str(key): found[key] for key in sorted(found)}


def _has_folder(git_dir: str, commit: str, folder: str = FOLDER) -> bool:
    return subprocess.run(["git", f"--git-dir={git_dir}", "cat-file", "-e", f"{commit}:{folder}"],
                          capture_output=True).returncode == 0


def java_api_versions(git_dir: str, commit: str) -> dict[str, str] | None:
    """Before the JSON definitions: per api key, the versions the Java client has a request schema for."""
    keys_path = JAVA + "protocol/ApiKeys.java"
    if not _has_folder(git_dir, commit, keys_path):
        return None
    keys = _java(git(git_dir, "show", f"{commit}:{keys_path}").decode())
    protocol = _java(git(git_dir, "show", f"{commit}:{JAVA}protocol/Protocol.java").decode())
    enum = keys[keys.index("enum ApiKeys"):]
    entries = list(re.finditer(r"\b([A-Z][A-Z0-9_]*)\(\s*(\d+)\s*,\s*\"", enum))
    found: dict[int, str] = {}
    for i, entry in enumerate(entries):
        body = enum[entry.end():entries[i + 1].start() if i + 1 < len(entries) else len(enum)]
        schemas = _request_schemas(git_dir, commit, entry.group(1), body, protocol)
        if schemas:  # a null entry is still a version of the protocol (the Scala broker's), counted
            found[int(entry.group(2))] = f"0-{len(schemas) - 1}" if len(schemas) > 1 else "0"
    return {str(key): found[key] for key in sorted(found)}


def _java(text: str) -> str:
    """Java source without its comments (none of the code read here has "//" or "/*" inside a string)."""
    return re.sub(r"//[^\n]*", "", re.sub(r"/\*.*?\*/", "", text, flags=re.S))


def _request_schemas(git_dir: str, commit: str, constant: str, entry: str, protocol: str) -> list[str]:
    """The `Schema[]` entries of one api's requests: a request class's schemaVersions() (1.0 on) or the
    Protocol.REQUESTS array (before)."""
    named = re.search(r"(\w+Request)\.schemaVersions\(\)", entry)
    if named:
        source = _java(git(git_dir, "show", f"{commit}:{JAVA}requests/{named.group(1)}.java").decode())
        body = re.search(r"Schema\[\]\s+schemaVersions\(\)\s*\{(.*?)\}\s", source, re.S).group(1)
        listed = re.search(r"new\s+Schema\[\]\s*\{(.*?)\}", body, re.S)
        if not listed:  # `return SOME_ARRAY;`
            name = re.search(r"return\s+(\w+)\s*;", body).group(1)
            listed = re.search(rf"\b{name}\s*=\s*(?:new\s+Schema\[\]\s*)?\{{(.*?)\}}", source, re.S)
        return [s.strip() for s in listed.group(1).split(",") if s.strip()]
    assigned = re.search(rf"REQUESTS\[ApiKeys\.{constant}\.id\]\s*=\s*(new\s+Schema\[\]\s*\{{[^}}]*\}}|\w+)\s*;",
                         protocol)
    if not assigned:
        return []
    value = assigned.group(1)
    if not value.startswith("new"):
        value = re.search(rf"\b{value}\s*=\s*((?:new\s+Schema\[\]\s*)?\{{[^}}]*\}})", protocol).group(1)
    return [s.strip() for s in value[value.index("{") + 1:value.rindex("}")].split(",") if s.strip()]


def releases(git_dir: str) -> list[dict]:
    out = []
    for name, ref in release_refs(git_dir):
        commit = git(git_dir, "rev-parse", "--verify", f"{ref}^{{commit}}").decode().strip()
        apis = api_versions(git_dir, commit)
        if apis is None:
            continue  # a release with neither the JSON definitions nor the Java client's ApiKeys
        date = git(git_dir, "log", "-1", "--format=%cs", commit).decode().strip()
        kind = "tag" if ref.startswith("refs/tags/") else "branch head"
        out.append({"name": name, "ref": ref, "kind": kind, "commit": commit, "date": date, "apis": apis})
    return out


def render(found: list[dict]) -> str:
    """One release a block, its api versions on one line: a diff of a new release reads as one."""
    head = {"about": "The versions of every api key in each Apache Kafka release (the request's validVersions),"
                     " read from apache/kafka by scripts/gen_releases.py; facts only. Made with: python"
                     " scripts/gen_releases.py --git KAFKA_GIT_DIR",
            "folder": FOLDER}
    lines = ["{"] + [f"  {json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()] + ['  "releases": [']
    for i, rel in enumerate(found):
        fields = [f"{json.dumps(k)}: {json.dumps(rel[k])}" for k in ("name", "ref", "kind", "commit", "date")]
        lines.append("    {" + ", ".join(fields) + ",")
        lines.append(f'     "apis": {json.dumps(rel["apis"])}}}' + ("," if i < len(found) - 1 else ""))
    return "\n".join(lines + ["  ]", "}"]) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--git", required=True, help="an apache/kafka git directory (bare is fine)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if the file would change")
    args = parser.parse_args(argv)
    text = render(releases(args.git))
    if OUT.exists() and OUT.read_text() == text:
        return 0
    if args.check:
        print(f"differs: {OUT.relative_to(ROOT)}")
        return 1
    OUT.write_text(text)
    print(f"wrote: {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
