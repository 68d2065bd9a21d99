"""kwire.counts: the one way text says how many of what (thousands separated, one in the singular)."""

from kwire.counts import count, noun, plural


def test_one_is_singular_and_every_other_count_plural():
    assert count(1, "record") == "1 record"
    assert count(0, "record") == "0 records"
    assert count(2, "record") == "2 records"
    assert count(-1, "record") == "-1 records"


def test_thousands_are_separated():
    assert count(11236, "packet") == "11,236 packets"
    assert count(1_000_000, "exchange") == "1,000,000 exchanges"
    assert count(999, "gap") == "999 gaps"


def test_regular_plurals_of_the_nouns_kwire_counts():
    cases = {"batch": "batches", "entry": "entries", "body": "bodies", "key": "keys",
             "Kafka connection": "Kafka connections", "request body": "request bodies", "box": "boxes"}
    for singular, many in cases.items():
        assert plural(singular) == many


def test_an_irregular_plural_is_given():
    assert count(2, "datum", "data") == "2 data"
    assert count(1, "datum", "data") == "1 datum"
    assert noun(3, "batch") == "batches"
