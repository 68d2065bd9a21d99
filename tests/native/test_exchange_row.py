"""kwire.native.exchange_row: an ExchangeRow is the fields of an exchange's row and a Mapping of their names, read the
way a dict of them is read (by the renderers, live metrics, Spark's Arrow tables), on both builds."""

from __future__ import annotations

import pickle
from collections.abc import Mapping
from pathlib import Path

import pyarrow as pa
import pytest

from kwire.native.exchange_facts import exchange_row, partition_rows
from kwire.native.exchange_row import EXCHANGE_COLUMNS, NAMES, PARTITION_COLUMNS, ExchangeRow, PartitionRow, row_of
from kwire.pipeline import analyze_files
from kwire.spark.results import ARROW_EXCHANGES

QUICK = Path(__file__).parent.parent.parent / "captures" / "produce-consume-zstd.pcap"


def _rows() -> list[ExchangeRow]:
    return [exchange_row(ex) for ex in analyze_files([str(QUICK)])]


def test_a_new_row_holds_what_most_exchanges_hold():
    row = ExchangeRow()
    assert isinstance(row, Mapping)
    assert list(row) == list(NAMES) == list(row.keys()) and len(row) == len(NAMES) == 29
    expected = dict.fromkeys(NAMES)
    expected.update(request_trailing_bytes=0, response_trailing_bytes=0, wait=False, negotiation=False)
    assert row.to_dict() == expected and dict(row) == expected and row == expected and expected == row


def test_a_row_reads_as_the_dict_of_its_names():
    rows = _rows()
    assert len(rows) > 10
    for row in rows:
        as_dict = row.to_dict()
        assert list(as_dict) == list(NAMES)
        assert row.items() == list(as_dict.items()) and row.values() == list(as_dict.values())
        for name in NAMES:
            assert row[name] is as_dict[name] and row.get(name) is as_dict[name] and name in row
            assert getattr(row, name) is as_dict[name]
        assert row == as_dict and not (row != as_dict)
        assert "nothing" not in row and row.get("nothing") is None and row.get("nothing", 7) == 7
        with pytest.raises(KeyError):
            row["nothing"]
        with pytest.raises(KeyError):
            row["nothing"] = 1
        changed = dict(as_dict, status="other")
        assert row != changed and changed != row


def test_a_row_pickles_by_its_fields():
    for row in _rows()[:20]:
        again = pickle.loads(pickle.dumps(row))
        assert type(again) is ExchangeRow and again == row and again.evidence == row.evidence


def test_row_of_a_mapping_keeps_its_names_and_takes_the_rest_from_a_new_row():
    row = row_of({"ts_ns": 5, "api": "Produce", "wait": True, "not_a_name": 1})
    assert type(row) is ExchangeRow
    assert row.ts_ns == 5 and row.api == "Produce" and row.wait is True
    assert row.negotiation is False and row.request_trailing_bytes == 0 and row.client is None
    assert "not_a_name" not in row
    same = ExchangeRow()
    assert row_of(same) is same
    whole = _rows()[0]
    assert row_of(whole.to_dict()) == whole


def test_arrow_takes_rows_as_it_takes_dicts():
    rows = _rows()
    from_rows = pa.Table.from_pylist(rows, schema=ARROW_EXCHANGES)
    from_dicts = pa.Table.from_pylist([row.to_dict() for row in rows], schema=ARROW_EXCHANGES)
    assert from_rows.equals(from_dicts) and from_rows.num_rows == len(rows)
    assert tuple(from_rows.column_names) == EXCHANGE_COLUMNS


def test_a_partition_row_reads_as_the_dict_of_its_columns():
    new = PartitionRow()
    expected = dict.fromkeys(PARTITION_COLUMNS, 0)
    expected.update(fetch_offset=None, high_watermark=None, lag=None)
    assert new == expected and list(new) == list(PARTITION_COLUMNS) and len(new) == 17
    new["ack_accept"] += 3  # (facts' acknowledgement counts add so)
    assert new.ack_accept == 3 and new["ack_accept"] == 3
    rows = [row for ex in analyze_files([str(QUICK)]) for row in partition_rows(ex)]
    assert {row.api for row in rows} >= {"Produce", "Fetch"}
    for row in rows:
        as_dict = row.to_dict()
        assert type(row) is PartitionRow and list(as_dict) == list(PARTITION_COLUMNS) and row == as_dict
        assert dict(row, client="c") == dict(as_dict, client="c")  # as kwire.spark.results adds its columns
        assert pickle.loads(pickle.dumps(row)) == row
        with pytest.raises(KeyError):
            row["nothing"]
