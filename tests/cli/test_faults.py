"""kwire.cli.faults: `kwire stats` over a directory where kwire fails on one capture (issue 49) leaves that
capture out, names it with its one-line error (exit status 1), and keeps the others' figures: the document
is the one `kwire stats` prints over the others. tests/hostile3/faulty.py makes the directory and the fault."""

from __future__ import annotations

import json

import pytest

from kwire.analytics import observe_groups
from tests.hostile3.faulty import FAULT_GROUP, FAULT_MESSAGE, inject_fault, write_dir
from tests.hostile3.outputs import command


@pytest.fixture
def folder(tmp_path):
    return tmp_path / "captures", write_dir(tmp_path / "captures")


@pytest.fixture
def fault(monkeypatch):
    monkeypatch.setitem(observe_groups._READERS, "Heartbeat", observe_groups._READERS["Heartbeat"])
    inject_fault()


def _stats(*args: str, exit_code: int = 1) -> tuple[dict, str]:
    out, err = command("stats", "--json", *args, exit_code=exit_code)
    return json.loads(out), err.decode()


def test_every_capture_counts_without_the_fault(folder):
    path, files = folder
    document, err = _stats("-j", "0", str(path))
    alone, _ = _stats("-j", "0", *map(str, files["good"] + files["fault"] + files["damaged"]))
    assert document == alone and "left out" not in err
    assert FAULT_GROUP in document["groups"] and "group-a" in document["groups"]  # (the nulls capture's)


@pytest.mark.parametrize("jobs", ["0", "2"])
def test_the_faulty_capture_is_left_out_and_named(folder, fault, jobs, tmp_path):
    path, files = folder
    html = tmp_path / "report.html"
    document, err = _stats("-j", jobs, "--html", str(html), str(path))
    others, _ = _stats("-j", "0", *map(str, files["good"] + files["damaged"]))
    assert document == others  # the other captures' figures, all of them
    assert FAULT_GROUP not in document["groups"]
    lines = [line for line in err.splitlines() if "left out" in line]
    assert len(lines) == 1 and lines[0].startswith(f"kwire: error: {files['fault'][0]}: left out: kwire failed on it")
    assert f"RuntimeError: {FAULT_MESSAGE} {FAULT_GROUP}" in lines[0]
    assert "(kwire/analytics/observe_groups.py:" in lines[0]
    assert "Traceback" not in err
    for damaged in files["damaged"]:  # still reported as they always were
        assert str(damaged) in err
    assert "fault.pcap" not in html.read_text()  # the report names the captures it counted


def test_one_faulty_capture_alone_is_one_line(folder, fault):
    _, files = folder
    _, err = command("stats", str(files["fault"][0]), exit_code=1)
    err = err.decode()
    assert err.startswith(f"kwire: error: kwire failed on {files['fault'][0]} (RuntimeError: {FAULT_MESSAGE}")
    assert len(err.strip().splitlines()) == 1


def test_a_fault_no_capture_has_alone_is_one_line(folder, monkeypatch):
    """A fault that needs several files together: nobody to blame, the run's one-line error."""
    _, files = folder
    from kwire.cli import stats

    most = max(_stats("-j", "0", str(f), exit_code=0)[0]["totals"]["exchanges"] for f in files["good"])
    summary_json = stats.summary_json

    def fails_when_merged(document):
        if document["totals"]["exchanges"] > most:
            raise RuntimeError("too much at once")
        return summary_json(document)

    monkeypatch.setattr(stats, "summary_json", fails_when_merged)
    _, err = command("stats", "--json", "-j", "0", *map(str, files["good"]), exit_code=1)
    assert "kwire failed on these files together, on none alone (RuntimeError: too much at once" in err.decode()


def test_a_fault_line_escapes_what_it_quotes_and_says_where():
    from kwire.analytics.groups import _s
    from kwire.errors import fault_line

    try:
        raise KeyError("client\x9b\u202e\x1b[2J")
    except KeyError as exc:
        line = fault_line(exc)
    assert line == "KeyError: 'client\\x9b\\u202e\\x1b[2J'"  # raised in a test: no line of kwire to name
    try:
        _s("not a number")
    except TypeError as exc:
        line = fault_line(exc)
    assert line.startswith("TypeError: ") and line.endswith(")") and "(kwire/analytics/groups.py:" in line
    try:
        raise ValueError("x" * 1000)
    except ValueError as exc:
        line = fault_line(exc)
    assert len(line) < 340 and line.endswith("… (712 more characters)")
