"""Words in every text view, on every bundled capture (issue 48): no Python `None`, a count of one in the
singular (`1 record`, never `1 records`), and a count of a thousand or more with its thousands separated
(`11,236 packets`, never `11236 packets`), in `inspect`, `inspect -V`, `inspect --records` and `stats`, on
stdout and on stderr (the closing summary line).

`word_problems` is the scanner; its own tests below show what it flags and what it leaves alone: values
from the wire as the tree shows them (`Port: 9092`, `TimeoutMs: 30000`), ports, correlation, producer and
broker ids, offsets and epochs are not counts and keep their digits as they are. Beside the bundled
captures, the same views of tests/hostile3/nulls.py's capture (a null in every field that can hold one,
every api and version), and a config DELETE and an ACL filter with a null host through the changes table:
a null reads "null" (as the -V tree writes it), a DELETE has no value, as kafka-configs' --delete-config.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from kwire.cli.main import cli
from tests.hostile3.changes import _write
from tests.hostile3.nulls import write_capture
from tests.render.hostile import exchange

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = sorted(p for p in (ROOT / "captures").rglob("*")
                  if re.search(r"\.pcap(ng)?(\.gz)?$", p.name))
VIEWS = {"inspect": ("inspect",), "inspect -V": ("inspect", "-V"), "inspect --records": ("inspect", "--records"),
         "stats": ("stats",)}

PYTHON_NONE = re.compile(r"\bNone\b")
# words whose singular ends in s: "1 status" is right
SINGULAR_S = ("is", "was", "has", "status", "process", "class", "address", "access", "alias", "bus", "plus", "less")
ONE_PLURAL = re.compile(r"(?<![\w.,:/-])(?<!corr )1 (?!(?:" + "|".join(SINGULAR_S) + r")\b)[a-z]+s\b")
# a number of four digits or more, then one space and a word: a count, unless it is part of an address, time,
# name or range, or an id, offset or epoch (a value from the wire in a tree, "Port: 9092  Rack: null", is
# followed by two spaces, its enum name or date by a parenthesis)
NOT_COUNTS = ("corr", "id", "pid", "broker", "node", "epoch", "offset", "offsets", "generation", "leader", "port")
UNSEPARATED = re.compile(r"(?<![\w:.=@/+,'#\[-])" + "".join(f"(?<!\\b{w} )" for w in NOT_COUNTS)
                         + r"([0-9]{4,})(?= [A-Za-z])")


def word_problems(text: str) -> list[str]:
    """Each Python None, plural count of one and unseparated count in `text`, with the words around it."""
    found = []
    for what, pattern in (("None", PYTHON_NONE), ("plural of one", ONE_PLURAL), ("unseparated", UNSEPARATED)):
        for m in pattern.finditer(text):
            found.append(f"{what}: …{text[max(0, m.start() - 50):m.end() + 30]}…".replace("\n", "⏎"))
    return found


def test_the_scanner_flags_what_it_guards():
    for text in ("cleanup.policy DELETE None", "(1 records) none", "need 1 bytes, 0 left", "1 batches for t[0]",
                 "kwire: 11236 packets, 4,038 exchanges", "(16384 B out, 63 B back)", "none  pid 7/0  16384 B"):
        assert word_problems(text), text


def test_the_scanner_leaves_alone_what_is_no_count():
    for text in ("(1 record) none", "1 batch for t[0]", "11,236 packets", "Port: 9092  Rack: null",
                 "TimeoutMs: 30000  Name: x", "Timestamp: 1763773212141 (2025-11-22)", "127.0.0.1:50412 → 127.0.0.1:9092 Fetch", "corr 12345 consumer-1",
                 "producer id 4000 sent", "broker 1001 answered", "offsets 1000-1999 (1,000 records)",
                 "2026-11-20 10:00:05.123 UTC", "@1795305691.5 x", "1 status", "ErrorCode: 0 (NONE)",
                 "offset 12345 (3 records)", "-1 records", "Fetch v4 corr 1 nulls-10 0.1 ms"):
        assert not word_problems(text), text


def _view(args: tuple[str, ...], capture: Path) -> str:
    keys = capture.with_name(capture.name + ".keys")
    keylog = ("--keylog", str(keys)) if keys.exists() else ()
    result = CliRunner().invoke(cli, [*args, "-j", "0", *keylog, str(capture)],
                                env={"NO_COLOR": "1", "COLUMNS": "160"}, catch_exceptions=False)
    assert result.exit_code == 0, (capture, result.output)
    return result.stdout + result.stderr


@pytest.mark.parametrize("view", list(VIEWS))
def test_every_view_of_every_capture_writes_counts_one_way(view):
    assert len(CAPTURES) > 40
    problems = {}
    for capture in CAPTURES:
        found = word_problems(_view(VIEWS[view], capture))
        if found:
            problems[capture.relative_to(ROOT).as_posix()] = sorted(set(found))[:5]
    assert not problems


@pytest.fixture(scope="module")
def nulls(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("words") / "nulls.pcap"
    write_capture(path)
    return path


@pytest.mark.parametrize("view", list(VIEWS))
def test_every_view_of_nulls_everywhere_writes_no_python_none(view, nulls):
    assert word_problems(_view(VIEWS[view], nulls)) == []


def _config_delete_and_acl_filter(path: Path) -> None:
    """An IncrementalAlterConfigs that deletes cleanup.policy (a null value) and sets retention.ms, then a
    DeleteAcls whose filter has a null host (any host), both answered ok."""
    configs = [{"Name": "cleanup.policy", "ConfigOperation": 1, "Value": None},
               {"Name": "retention.ms", "ConfigOperation": 0, "Value": "60000"}]
    frames = exchange(44, 1, 1, "ops-tool",
                      {"Resources": [{"ResourceType": 2, "ResourceName": "orders", "Configs": configs}],
                       "ValidateOnly": False},
                      {"ThrottleTimeMs": 0, "Responses": [{"ErrorCode": 0, "ErrorMessage": None, "ResourceType": 2,
                                                           "ResourceName": "orders"}]})
    frames += exchange(31, 2, 2, "ops-tool",
                       {"Filters": [{"ResourceTypeFilter": 2, "ResourceNameFilter": "orders", "PatternTypeFilter": 3,
                                     "PrincipalFilter": "User:carol", "HostFilter": None, "Operation": 1,
                                     "PermissionType": 1}]},
                       {"ThrottleTimeMs": 0, "FilterResults": [{"ErrorCode": 0, "ErrorMessage": None,
                                                                "MatchingAcls": []}]})
    _write(path, [frames])


def test_a_config_delete_has_no_value_and_a_null_host_reads_null(tmp_path):
    path = tmp_path / "delete.pcap"
    _config_delete_and_acl_filter(path)
    out = _view(("stats",), path)
    assert "topic orders cleanup.policy DELETE, retention.ms SET 60000" in out
    assert "ACL filter ANY User:carol ANY TOPIC:orders (LITERAL, host null), 0 deleted" in out
    assert word_problems(out) == []
