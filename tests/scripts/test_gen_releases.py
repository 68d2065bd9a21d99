"""scripts/gen_releases.py: each Kafka release's api versions, read from git.

A small git repository in Kafka's layout checks which refs are read (final release tags from 0.9.0, a newer
release branch with no tag yet, trunk; not release candidates, nor older tags), the Java client's schemas
before the JSON definitions (Protocol.java's arrays, then each request class's schemaVersions(), a null
entry counted as a version), that only the first JSON value of a file counts (2.8.0's DescribeProducersRequest.json has a
stray "]}" after it) and that an unstable newest version says so. With KWIRE_KAFKA_GIT the committed
scripts/kafka_releases.json is checked against a fresh reading.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest

from tests.scripts.git_repo import commit, git

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
spec = importlib.util.spec_from_file_location("gen_releases", ROOT / "scripts" / "gen_releases.py")
gen = importlib.util.module_from_spec(spec)
sys.modules["gen_releases"] = gen
spec.loader.exec_module(gen)


def request(valid: str, unstable: bool = False, trailing: str = "") -> str:
    body = {"apiKey": 0, "type": "request", "name": "ProduceRequest", "validVersions": valid, "fields": []}
    if unstable:
        body["latestVersionUnstable"] = True
    return "// a licence\n" + json.dumps(body) + trailing


def test_the_releases_read_and_their_versions(tmp_path):
    repo = tmp_path / "kafka"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "trunk")
    where = gen.FOLDER + "/ProduceRequest.json"
    commit(repo, {"README": "before the Java client"}, "old")
    git(repo, "tag", "0.8.2.0")
    keys = gen.JAVA + "protocol/ApiKeys.java"
    old = commit(repo, {keys: 'public enum ApiKeys {\n    PRODUCE(0, "Produce"),\n    CONTROLLED_SHUTDOWN_KEY(7, "C");\n',
                        gen.JAVA + "protocol/Protocol.java": (
                            "public static final Schema[] PRODUCE_REQUEST = {PRODUCE_REQUEST_V0, PRODUCE_REQUEST_V1};\n"
                            "// REQUESTS[ApiKeys.PRODUCE.id] = NOT_THIS;\n"
                            "REQUESTS[ApiKeys.PRODUCE.id] = PRODUCE_REQUEST;\n"
                            "REQUESTS[ApiKeys.CONTROLLED_SHUTDOWN_KEY.id] = new Schema[] {null, CS_V1};\n")}, "0.10")
    git(repo, "tag", "0.10.0.0")
    java = commit(repo, {keys: 'public enum ApiKeys {\n    PRODUCE(0, "Produce", ProduceRequest.schemaVersions(),\n'
                               '        ProduceResponse.schemaVersions());\n',
                         gen.JAVA + "requests/ProduceRequest.java": (
                             "public static Schema[] schemaVersions() {\n    return new Schema[] {V0, V1,\n        V2};\n}\n")},
                  "1.0")
    git(repo, "tag", "1.0.0")
    tagged = commit(repo, {where: request("0-7", trailing="\n  ]}\n")}, "2.2")
    git(repo, "tag", "2.2.0")
    commit(repo, {where: request("0-8")}, "2.3 candidate")
    git(repo, "tag", "2.3.0-rc0")
    branch = commit(repo, {where: request("0-8", unstable=True)}, "2.3 branch")
    git(repo, "branch", "2.3")
    trunk = commit(repo, {where: request("3-9")}, "trunk")
    found = gen.releases(str(repo / ".git"))
    assert [(r["name"], r["kind"], r["commit"], r["apis"]) for r in found] == [
        ("0.10.0", "tag", old, {"0": "0-1", "7": "0-1"}), ("1.0", "tag", java, {"0": "0-2"}),
        ("2.2", "tag", tagged, {"0": "0-7"}), ("2.3", "branch head", branch, {"0": "0-8 unstable"}),
        ("trunk", "branch head", trunk, {"0": "3-9"})]
    assert json.loads(gen.render(found))["releases"] == found


@pytest.mark.skipif(not os.environ.get("KWIRE_KAFKA_GIT"), reason="needs an apache/kafka git directory: KWIRE_KAFKA_GIT")
def test_committed_releases_are_what_git_says():
    assert gen.main(["--git", os.environ["KWIRE_KAFKA_GIT"], "--check"]) == 0
