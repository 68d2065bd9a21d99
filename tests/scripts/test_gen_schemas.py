"""scripts/gen_schemas.py: the union of Kafka's definitions across releases, and what it commits.

Small folders of definitions in Kafka's own format (JSON with // comments) check the joining rules: a
version trunk dropped is kept from an older release, a field an older release alone had is kept for
its versions and in its place, a version whose fields changed before release reads as the newest
folder says, comments are stripped but never inside strings. The committed api table, docs page and
schema modules are checked against each other and against the pin (scripts/kafka_spec.json): every
generated file names the pin's SHA-256 and trunk commit, and is what the generator writes from the facts
the committed modules state (a hand edit fails). A small git repository in Kafka's layout checks pinning:
the sources read at their pinned commits, a file whose digest differs stopped with one line. With
KWIRE_KAFKA_GIT (an apache/kafka git directory holding the pinned commits) or KWIRE_KAFKA_DEFS (folders,
one a pinned source, oldest first, joined by ':') the committed files are checked against a fresh
generation from Kafka's definitions.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest

from tests.scripts.git_repo import git

from kwire.codec.schemas import all_schemas, module_name
from kwire.kafka.apis import APIS

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("gen_schemas", ROOT / "scripts" / "gen_schemas.py")
gen = importlib.util.module_from_spec(spec)
sys.modules["gen_schemas"] = gen
spec.loader.exec_module(gen)


def write(folder: Path, name: str, text: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.json").write_text(text)


def definition(kind: str, valid: str, fields: list[dict], flexible: str = "none") -> str:
    body = {"apiKey": 99, "type": kind, "name": f"Demo{kind.capitalize()}", "validVersions": valid,
            "flexibleVersions": flexible, "fields": fields}
    return "// a licence header\n// and a comment\n" + json.dumps(body, indent=2).replace(
        '"fields"', '// a comment before the fields\n  "fields"', 1)


def field(name: str, type_: str, versions: str, **extra) -> dict:
    return {"name": name, "type": type_, "versions": versions, "about": "see http://example.com//x", **extra}


def test_comments_are_stripped_but_not_inside_strings():
    text = '{"a": "http://x//y", // gone\n "b": "\\"//\\""}'
    assert json.loads(gen.strip_comments(text)) == {"a": "http://x//y", "b": '"//"'}


def test_dropped_versions_and_fields_are_kept_from_older_releases(tmp_path):
    old, new = tmp_path / "3.9", tmp_path / "trunk"
    old_fields = [field("ReplicaId", "int32", "0+", entityType="brokerId"), field("MaxNumOffsets", "int32", "0"),
                  field("Topics", "[]Topic", "0+", fields=[field("Name", "string", "0+", entityType="topicName")])]
    new_fields = [field("ReplicaId", "int32", "0+", entityType="brokerId"),
                  field("Topics", "[]Topic", "0+", fields=[field("Name", "string", "0+", entityType="topicName"),
                                                           field("Timeout", "int32", "4+", default="-1")])]
    for kind in ("request", "response"):
        write(old, f"Demo{kind.capitalize()}", definition(kind, "0-3", old_fields))
        write(new, f"Demo{kind.capitalize()}", definition(kind, "1-5", new_fields, flexible="4+"))
    messages = gen.build_messages([old, new])
    gen.check(messages, [old, new])
    msg = messages[(99, "request")]
    assert gen.show(msg.valid) == "0-5" and gen.show(msg.flexible) == "4+"
    assert [(f.name, gen.show(f.versions)) for f in msg.fields] == [
        ("ReplicaId", "0+"), ("MaxNumOffsets", "0"), ("Topics", "0+")]
    topic = msg.fields[2].fields
    assert [(f.name, gen.show(f.versions), f.default) for f in topic] == [("Name", "0+", None), ("Timeout", "4+", "-1")]
    source = gen.field_source(msg.fields[0], "")
    assert source == ['F("ReplicaId", "int32", "0+", entity=BROKER_ID),']


def test_a_version_reads_as_its_newest_definition_says(tmp_path):
    # StreamsGroupHeartbeat: v0 shipped in 4.1 with an int32 AcceptableRecoveryLag; 4.4 renamed it
    # AcceptableRecoveryLagLegacy (v0) and added an int64 AcceptableRecoveryLag (v1+)
    early, late = tmp_path / "4.1", tmp_path / "4.4"
    for kind in ("request", "response"):
        write(early, f"Demo{kind.capitalize()}", definition(kind, "0", [field("AcceptableRecoveryLag", "int32", "0+")],
                                                            flexible="0+"))
        write(late, f"Demo{kind.capitalize()}", definition(kind, "0-1", [
            field("AcceptableRecoveryLagLegacy", "int32", "0"), field("AcceptableRecoveryLag", "int64", "1+")],
            flexible="0+"))
    messages = gen.build_messages([early, late])
    gen.check(messages, [early, late])
    assert [(f.name, f.type, gen.show(f.versions)) for f in messages[(99, "response")].fields] == [
        ("AcceptableRecoveryLagLegacy", "int32", "0"), ("AcceptableRecoveryLag", "int64", "1+")]


def test_a_conflict_the_rules_cannot_join_is_refused(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for kind in ("request", "response"):
        write(a, f"Demo{kind.capitalize()}", definition(kind, "0-1", [field("X", "int32", "0+")]))
        write(b, f"Demo{kind.capitalize()}", definition(kind, "2-3", [field("X", "int64", "0+")]))
    with pytest.raises(SystemExit, match="type int64 in one folder, int32 in another"):
        gen.build_messages([a, b])


def test_every_api_key_has_a_module_and_the_table_says_its_versions():
    schemas = all_schemas()
    for key, spec in APIS.items():
        for kind in ("request", "response"):
            schema = schemas[(key, kind)]
            assert (schema.valid.lo, schema.valid.hi) == (spec.min_version, spec.max_version)
        module = importlib.import_module(f"kwire.codec.schemas.{module_name(spec.name)}")
        assert "GENERATED by scripts/gen_schemas.py" in module.__doc__
    assert set(range(0, 95)) <= set(APIS)


def test_docs_apis_page_equals_the_api_table():
    rows = re.findall(r"^\| (\d+) \| (\w+) \| ([\d-]+) \| (\w+) \|", (ROOT / "docs" / "apis.md").read_text(), re.M)
    table = {int(key): (name, versions, flexible) for key, name, versions, flexible in rows}
    assert table == {key: (spec.name, f"{spec.min_version}-{spec.max_version}" if spec.max_version > spec.min_version
                           else str(spec.min_version), "never" if spec.flexible_from is None else str(spec.flexible_from))
                     for key, spec in APIS.items()}


PIN = json.loads((ROOT / "scripts" / "kafka_spec.json").read_text())
PIN_SHA = hashlib.sha256((ROOT / "scripts" / "kafka_spec.json").read_bytes()).hexdigest()


def test_every_generated_file_names_the_pin():
    trunk = next(s for s in PIN["sources"] if s["name"] == "trunk")
    commit = trunk["commit"][:12] if trunk["commit"] else "not recorded"
    stamp = f"pinned in scripts/kafka_spec.json (sha256 {PIN_SHA[:16]}; trunk commit {commit})"
    names = [s["name"] for s in PIN["sources"]]
    generated = [ROOT / "kwire/kafka/apis.py", ROOT / "docs/apis.md"] + [
        p for p in (ROOT / "kwire/codec/schemas").glob("*.py") if p.name != "__init__.py"]
    assert len(generated) == len(APIS) + 2
    for path in generated:
        text = " ".join(path.read_text().replace("# ", "").split())  # the stamp may wrap, or be a comment
        assert stamp in text, path
        assert re.search(r"apache/kafka " + ", ".join(map(re.escape, names[:-1])) + " and " + names[-1], text), path


def test_the_pin_says_what_each_source_is():
    assert [s["name"] for s in PIN["sources"]][-1] == "trunk"
    for source in PIN["sources"]:
        assert source["ref"].startswith(("refs/heads/", "refs/tags/"))
        if source["commit"] is None:  # never recorded: the pin's note says why, and no digest is claimed
            assert source["files"] is None and "not recorded" in PIN["note"]
        else:
            assert re.fullmatch(r"[0-9a-f]{40}", source["commit"])
            assert all(re.fullmatch(r"[0-9a-f]{64}", d) for d in source["files"].values())


def test_committed_files_are_what_the_generator_writes_from_their_own_facts(capsys):
    assert gen.main(["--check"]) == 0, capsys.readouterr().out


def test_a_hand_edit_of_a_module_fails_the_check(tmp_path, monkeypatch):
    schemas = tmp_path / "schemas"
    shutil.copytree(ROOT / "kwire/codec/schemas", schemas)
    produce = schemas / "produce.py"
    edited = produce.read_text().replace('F("TransactionalId", "string", "3+"', 'F("TransactionalId", "string", "4+"')
    produce.write_text(edited)
    monkeypatch.setattr(gen, "SCHEMAS", schemas)
    made = gen.Made("x", "y", json.loads((ROOT / "scripts" / "kafka_releases.json").read_text())["releases"])
    text = gen.outputs(gen.committed_messages(), made)[produce]
    assert "- v4: +TransactionalId" in text and text != edited  # its summary no longer says what it states


def test_first_releases_of_each_version():
    releases = [{"name": "2.2", "kind": "tag", "date": "", "apis": {"0": "0-1"}},
                {"name": "2.3", "kind": "tag", "date": "", "apis": {"0": "0-2 unstable", "1": "0 unstable"}},
                {"name": "2.4", "kind": "tag", "date": "", "apis": {"0": "0-2"}},
                {"name": "trunk", "kind": "branch head", "date": "2024-10-25", "apis": {"0": "1-3"}}]
    first = gen.first_releases(releases)
    assert first[0] == {0: ("2.2 or before", "2.2 or before"), 1: ("2.2 or before", "2.2 or before"),
                        2: ("2.3", "2.4"), 3: ("trunk 2024-10-25", "trunk 2024-10-25")}
    assert first[1] == {0: ("2.3", None)}


def test_docs_say_the_first_release_of_every_version():
    """Each cell read back against the releases' own ranges: the release it names defines the version
    (serves it, unless the cell says unstable), and no release before it serves it."""
    rows = re.findall(r"^\| (\d+) \| (\w+) \| (v\d.*) \|$", (ROOT / "docs" / "apis.md").read_text(), re.M)
    assert [int(key) for key, _, _ in rows] == sorted(APIS)
    releases = json.loads((ROOT / "scripts" / "kafka_releases.json").read_text())["releases"]
    names = [r["name"] if r["name"] != "trunk" else f"trunk {r['date']}" for r in releases]

    def serves(release, key, version, stable=True):
        versions, _, unstable = release["apis"].get(key, "none").partition(" ")
        r = gen.parse_range(versions)
        return r is not None and r[0] <= version <= r[1] and not (stable and unstable and version == r[1])

    checked = 0
    for key, _, cells in rows:
        for cell in cells.split("; "):
            versions, _, said = cell.partition(": ")
            lo, hi = gen.parse_range(versions[1:])
            name = re.sub(r" or before$|, unstable$| \(unstable in .*\)$", "", said)
            for v in range(lo, hi + 1):
                if name == "later":
                    assert not any(serves(r, key, v, stable=False) for r in releases), (key, v)
                    continue
                at = names.index(name)
                assert serves(releases[at], key, v, stable=not said.endswith(", unstable")), (key, v, said)
                assert not any(serves(r, key, v) for r in releases[:at]), (key, v, said)
                checked += 1
    assert checked > 300  # every version of every api but the "later" ones


# -- pinning, on a small git repository in Kafka's layout --------------------------------------------

@pytest.fixture
def kafka(tmp_path):
    """A git repository with Kafka's definition folder: an old release branch and trunk."""
    repo = tmp_path / "kafka"
    folder = repo / gen.spec_pin.FOLDER
    folder.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "trunk")
    commits = {}
    for name, valid in (("3.9", "0-1"), ("trunk", "1-2")):
        if name == "trunk":
            git(repo, "checkout", "-q", "-b", "trunk-work")
        for kind in ("request", "response"):
            (folder / f"Demo{kind.capitalize()}.json").write_text(definition(kind, valid, [field("X", "int32", "0+")]))
        git(repo, "add", "-A")
        git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", name)
        commits[name] = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "branch", "-q", "-f", "3.9", commits["3.9"])
    git(repo, "branch", "-q", "-f", "trunk", commits["trunk"])
    return repo, commits


def pin_sources(repo: Path) -> None:
    refs = ["3.9=refs/heads/3.9", "trunk=refs/heads/trunk"]
    gen.spec_pin.write_pin(gen.spec_pin.make_pin(str(repo / ".git"), refs, "a test"))


def test_the_pinned_sources_are_read_at_their_commits_and_checked(kafka, tmp_path, monkeypatch):
    repo, commits = kafka
    monkeypatch.setattr(gen.spec_pin, "PIN", tmp_path / "kafka_spec.json")
    pin_sources(repo)
    pin = gen.spec_pin.load_pin()
    assert [(s["name"], s["commit"]) for s in pin["sources"]] == [("3.9", commits["3.9"]), ("trunk", commits["trunk"])]
    digest = hashlib.sha256((repo / gen.spec_pin.FOLDER / "DemoRequest.json").read_bytes()).hexdigest()
    assert pin["sources"][1]["files"]["DemoRequest.json"] == digest
    # trunk moves on: the pin still reads the commit it names
    (repo / gen.spec_pin.FOLDER / "DemoRequest.json").write_text("{}")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-am", "later")
    files = gen.spec_pin.pinned_sources(pin, str(repo / ".git"), None)
    messages = gen.from_sources([gen.Source(s["name"], f) for s, f in zip(pin["sources"], files)])
    assert gen.show(messages[(99, "request")].valid) == "0-2"
    made = gen.Made(gen.spec_pin.source_label(pin), gen.spec_pin.stamp(pin, gen.spec_pin.pin_digest()), [])
    assert made.stamp == (f"pinned in scripts/kafka_spec.json (sha256 {gen.spec_pin.pin_digest()[:16]}; "
                          f"trunk commit {commits['trunk'][:12]})")
    assert made.label == "apache/kafka 3.9 and trunk (" + pin["sources"][1]["date"] + ")"


def test_a_file_that_is_not_the_pinned_one_stops_the_generator(kafka, tmp_path, monkeypatch):
    repo, commits = kafka
    monkeypatch.setattr(gen.spec_pin, "PIN", tmp_path / "kafka_spec.json")
    pin_sources(repo)
    pin = gen.spec_pin.load_pin()
    old, new = tmp_path / "old", tmp_path / "new"
    for folder, commit in ((old, commits["3.9"]), (new, commits["trunk"])):
        folder.mkdir()
        for name, data in gen.spec_pin.read_git(str(repo / ".git"), commit).items():
            (folder / name).write_bytes(data)
    assert len(gen.spec_pin.pinned_sources(pin, None, [old, new])) == 2
    (new / "DemoResponse.json").write_text((new / "DemoResponse.json").read_text() + "\n")
    with pytest.raises(SystemExit) as stop:
        gen.spec_pin.pinned_sources(pin, None, [old, new])
    message = str(stop.value)
    assert "\n" not in message and "source trunk: DemoResponse.json: sha256" in message and "pinned" in message
    (new / "Extra.json").write_text("{}")
    with pytest.raises(SystemExit, match=r"DemoResponse.json: sha256 .* \(and 1 more\)"):
        gen.spec_pin.pinned_sources(pin, None, [old, new])
    with pytest.raises(SystemExit, match="1 folders given, the pin has 2 sources"):
        gen.spec_pin.pinned_sources(pin, None, [old])


def test_a_source_pinned_without_a_commit_is_refused(tmp_path):
    pin = {"sources": [{"name": "4.0", "ref": "refs/heads/4.0", "commit": None, "files": None}]}
    with pytest.raises(SystemExit, match="source 4.0 has no commit pinned"):
        gen.spec_pin.pinned_sources(pin, str(tmp_path), None)
    with pytest.raises(SystemExit, match="source 4.0 has no file digests pinned"):
        gen.spec_pin.pinned_sources(pin, None, [tmp_path])


def _full_check_reason() -> str | None:
    if not (os.environ.get("KWIRE_KAFKA_GIT") or os.environ.get("KWIRE_KAFKA_DEFS")):
        return "needs Kafka's definitions: KWIRE_KAFKA_GIT (a git directory) or KWIRE_KAFKA_DEFS (folders)"
    if os.environ.get("KWIRE_KAFKA_GIT") and not all(s["commit"] for s in PIN["sources"]):
        return "the pin names no commit for some sources (scripts/kafka_spec.json's note says why)"
    return None


@pytest.mark.skipif(_full_check_reason() is not None, reason=_full_check_reason() or "")
def test_committed_files_are_what_the_generator_writes(capsys):
    if os.environ.get("KWIRE_KAFKA_GIT"):
        args = ["--git", os.environ["KWIRE_KAFKA_GIT"]]
    else:
        args = ["--defs", *os.environ["KWIRE_KAFKA_DEFS"].split(":")]
    assert gen.main(args + ["--check"]) == 0, capsys.readouterr().out
