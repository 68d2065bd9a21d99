"""The latency tables of `kwire stats` say what their latencies leave out: the long polls that waited for
data and got none (`waits`), counted in the exchanges but not in p50-max; the header says it of the total."""

from __future__ import annotations

import copy

from kwire.render.stats_view import waits_note
from tests import problems as P
from tests.render.test_groups_view import stats_text


def _text(doc: dict) -> str:
    return stats_text(doc, 240)


def test_the_tables_and_the_header_name_the_waits_they_leave_out():
    doc = P.document("txn-stall")
    waits = doc["apis"]["Fetch"]["versions"]["16"]["waits"]["count"]
    assert 0 < waits < doc["apis"]["Fetch"]["exchanges"]
    text = _text(doc)
    api_part = text[text.index("By api and version"):text.index("By client id")]
    assert f"latencies leave out {waits} long polls" in api_part and f"Fetch v16 {waits} of 38" in api_part
    assert text.splitlines()[3].startswith(f"not in the latencies: {doc['totals']['waits']['count']} long polls "
                                           "answered empty after waiting for data")


def test_an_all_versions_row_is_not_counted_twice():
    doc = copy.deepcopy(P.document("txn-stall"))
    fetch = doc["apis"]["Fetch"]
    v16 = fetch["versions"]["16"]
    fetch["versions"]["15"] = copy.deepcopy(v16)
    fetch["waits"] = dict(v16["waits"], count=2 * v16["waits"]["count"])
    text = _text(doc)
    api_part = text[text.index("By api and version"):text.index("By client id")]
    assert f"latencies leave out {2 * v16['waits']['count']} long polls" in api_part
    assert "Fetch (all)" in api_part and "Fetch (all) " not in api_part.split("latencies leave out")[1]


def test_no_note_without_waits():
    doc = P.document("txn-stall")
    rows = [(["x"], dict(fig, waits={"count": 0, "p50_ms": None, "max_ms": None})) for fig in doc["brokers"].values()]
    assert waits_note(rows) is None
