"""The error-code table: complete, unique, and agreeing with an independent source (kio)."""

from __future__ import annotations

import pytest

from kwire.kafka.error_codes import ERRORS, ErrorCode, _TABLE, error_name, is_retriable

kio_errors = pytest.importorskip("kio.schema.errors")

# Where kio and Kafka's Errors.java disagree, Errors.java wins: it is the broker's own definition, and
# kio's enum is generated from it (so a disagreement means kio is stale or wrong). As of kio 0.6.5 the
# two agree on every code, name and retriable flag, so this map is empty; a future disagreement goes
# here as {code: "why Errors.java differs"} rather than by weakening the assertions below.
KIO_DISAGREEMENTS: dict[int, str] = {}


def test_codes_unique_and_table_indexed_by_code() -> None:
    codes = [row.code for row in _TABLE]
    assert len(codes) == len(set(codes))
    assert len(ERRORS) == len(_TABLE)
    assert all(ERRORS[row.code] is row for row in _TABLE)


def test_names_unique_and_kafka_shaped() -> None:
    names = [row.name for row in _TABLE]
    assert len(names) == len(set(names))
    assert all(name.isupper() and name.replace("_", "").isalnum() for name in names)


def test_codes_are_contiguous_from_minus_one() -> None:
    # Kafka allocates codes one after another; a hole would mean a row was dropped.
    assert sorted(ERRORS) == list(range(-1, max(ERRORS) + 1))
    assert max(ERRORS) >= 133


def test_anchor_rows() -> None:
    assert ERRORS[-1] == ErrorCode(
        -1,
        "UNKNOWN_SERVER_ERROR",
        False,
        "The server experienced an unexpected error when processing the request.",
    )
    assert ERRORS[0] == ErrorCode(0, "NONE", False, "")
    assert ERRORS[3].name == "UNKNOWN_TOPIC_OR_PARTITION" and ERRORS[3].retriable
    assert ERRORS[6].name == "NOT_LEADER_OR_FOLLOWER" and ERRORS[6].retriable
    assert ERRORS[35].name == "UNSUPPORTED_VERSION" and not ERRORS[35].retriable
    assert ERRORS[133].name == "SHARE_SESSION_LIMIT_REACHED" and ERRORS[133].retriable


def test_every_error_but_none_has_a_description() -> None:
    for row in _TABLE:
        assert isinstance(row.description, str)
        assert (row.description == "") == (row.code == 0), row


def test_every_kio_code_agrees() -> None:
    mismatches = []
    for member in kio_errors.ErrorCode:
        code = int(member)
        if code in KIO_DISAGREEMENTS:
            continue
        row = ERRORS.get(code)
        if row is None:
            mismatches.append((code, member.name, "missing from kwire"))
        elif row.name != member.name.upper() or row.retriable != member.retriable:
            mismatches.append((code, (row.name, row.retriable), (member.name, member.retriable)))
    assert mismatches == []


def test_kwire_has_no_code_kio_lacks_without_a_note() -> None:
    kio_codes = {int(member) for member in kio_errors.ErrorCode}
    assert set(ERRORS) - kio_codes - set(KIO_DISAGREEMENTS) == set()


def test_error_name() -> None:
    assert error_name(0) == "NONE"
    assert error_name(-1) == "UNKNOWN_SERVER_ERROR"
    assert error_name(16) == "NOT_COORDINATOR"
    assert error_name(123) == "INVALID_SHARE_SESSION_EPOCH"
    assert error_name(134) == "UNKNOWN_ERROR_CODE(134)"
    assert error_name(-2) == "UNKNOWN_ERROR_CODE(-2)"
    assert error_name(32767) == "UNKNOWN_ERROR_CODE(32767)"


def test_is_retriable() -> None:
    assert not is_retriable(0)
    assert not is_retriable(-1)
    assert is_retriable(7)  # REQUEST_TIMED_OUT
    assert is_retriable(74)  # FENCED_LEADER_EPOCH, via InvalidMetadataException
    assert not is_retriable(29)  # TOPIC_AUTHORIZATION_FAILED
    assert not is_retriable(9999)
    assert not is_retriable(-32768)
    assert {code for code in ERRORS if is_retriable(code)} == {r.code for r in _TABLE if r.retriable}
