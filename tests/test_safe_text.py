"""kwire.safe_text: what is escaped, for a terminal, for JSON and for a metric label, checked against Python's
own definition of printable (an independent source) and against a JSON parser."""

from __future__ import annotations

import json
import random

import orjson
import pytest

from kwire.safe_text import json_safe, json_safe_text, label_safe, term_safe

UNSAFE = ["\x00", "\x1b", "\x7f", "\x85", "\x9b", "\u00a0", "\u00ad", "\u061c", "\u200b", "\u200e", "\u202e",
          "\u2028", "\u2029", "\u2066", "\ufeff", "\U000e0001", "\U0010fffd"]
SAFE = ["a", "é", "\u4e2d", "→", " ", "\U0001f600", "\\", '"']


def test_term_safe_escapes_exactly_what_is_not_printable():
    for ch in UNSAFE:
        assert not ch.isprintable()
        shown = term_safe(f"a{ch}b")
        assert shown.isprintable() and shown == "a" + repr(ch)[1:-1] + "b"
    for ch in SAFE:
        assert term_safe(ch) == ch
    assert term_safe(None) == "null" and term_safe(12) == "12"


@pytest.mark.parametrize("ch", UNSAFE)
def test_json_safe_writes_escapes_and_keeps_the_data(ch):
    value = {"k" + ch: ["x" + ch + "y", ch * 3], "n": 1}
    for line in (orjson.dumps(value) + b"\n", orjson.dumps(value)):
        safe = json_safe(line)
        assert all(c.isprintable() for c in safe.decode().rstrip("\n"))
        assert json.loads(safe) == value
        assert safe.endswith(b"\n") == line.endswith(b"\n")
    text = json.dumps(value, indent=2, ensure_ascii=False)
    safe_text = json_safe_text(text)
    assert all(line.isprintable() for line in safe_text.split("\n"))
    assert json.loads(safe_text) == value and safe_text.count("\n") == text.count("\n")


def test_json_safe_leaves_safe_json_as_it_is():
    for line in (b'{"a":"plain"}\n', '{"a":"\u00e9\u4e2d\U0001f600"}\n'.encode()):
        assert json_safe(line) is line
    text = json.dumps({"a": ["é", 1]}, indent=2, ensure_ascii=False)
    assert json_safe_text(text) is text


def test_json_safe_on_random_strings():
    rng = random.Random(49)
    for _ in range(300):
        value = "".join(chr(rng.choice((rng.randrange(0x20, 0x7f), rng.randrange(0x80, 0x3000),
                                        rng.randrange(0x10000, 0x110000)))) for _ in range(12))
        value = "".join(c for c in value if not 0xD800 <= ord(c) < 0xE000)
        safe = json_safe(orjson.dumps([value]))
        assert json.loads(safe) == [value]
        assert all(c.isprintable() for c in safe.decode())


def test_label_values_are_escaped_and_stay_distinct():
    values = ["a\x9bb", "a\\x9bb", "a\\\\x9bb", "a\\b", "ab", "a\u202eb", "a\\u202eb", "plain"]
    labels = [label_safe(v) for v in values]
    assert len(set(labels)) == len(values)
    assert all(label.isprintable() for label in labels)
    assert label_safe("plain") == "plain" and label_safe(7) == "7"
