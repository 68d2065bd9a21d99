"""The labels of the HTML group timeline (kwire.render.member_labels, kwire.render.groups_html): distinct
however long a start or end the member ids share, short, a piece of the id as every output shows it,
safe against hostile ids, bounded; and matched to the members the clients themselves saw (the problem
recordings' truth files, not kwire's output)."""

from __future__ import annotations

import base64
import html
import random
import re
import unicodedata
import uuid

from hypothesis import given, settings
from hypothesis import strategies as st

from kwire.render.groups_html import groups_section
from kwire.render.member_labels import CLIENT_COLUMNS, MIN_CHARS, PART_COLUMNS, label_text, member_labels, member_parts
from kwire.safe_text import term_safe
from tests import problems as P


def columns(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def piece(part: str) -> str:
    """The part without its ellipsis and number: the characters it shows of the id."""
    return re.sub(r" #\d+$", "", part).strip("…")


def check(members: dict) -> dict:
    """Every guarantee of member_labels on `members` (member id -> client id); the labels."""
    labels = member_labels(members)
    texts = [label_text(c, p) for c, p in labels.values()]
    assert len(set(texts)) == len(members), "two members share a label"
    assert len({p for _, p in labels.values()}) == len(members), "two members share a part"
    for member_id, (client, part) in labels.items():
        shown, bare = term_safe(member_id), re.sub(r" #\d+$", "", part)
        assert (bare == shown or bare.startswith("…") and shown.endswith(bare[1:])
                or bare.endswith("…") and shown.startswith(bare[:-1])), (member_id, part)
        assert columns(bare) <= PART_COLUMNS
        assert columns(client) <= CLIENT_COLUMNS
        assert label_text(client, part).isprintable()
    return labels


def test_pointer_ids_of_the_mock_cluster_get_their_distinct_ends():
    """librdkafka's mock cluster: ids that share their first 9-10 characters (the issue's `0x7fe1a000`)."""
    ids = ["0x7f1c680085b0", "0x7f1c680094c0", "0x7f1c6800c930", "0x7f1c6800e620", "0x7f1c6800e7f0",
           "0x7f1c6800fe10", "0x7f1c68013bd0"]
    labels = check({m: "kwire-flapper" for m in ids})
    assert [labels[m][1] for m in ids] == ["…85b0", "…94c0", "…c930", "…e620", "…e7f0", "…fe10", "…3bd0"]
    assert label_text(*labels[ids[0]]) == "kwire-flapper …85b0"


def test_the_end_is_the_shortest_that_tells_the_members_apart():
    ids = ["rdkafka-aaaa-x1234", "rdkafka-bbbb-y1234", "rdkafka-cccc-z9999"]
    parts = member_parts(ids)
    assert parts == {ids[0]: "…x1234", ids[1]: "…y1234", ids[2]: "…9999"}
    for m, part in parts.items():  # one character less and another id ends so (or it is under MIN_CHARS)
        shorter = piece(part)[1:]
        assert len(shorter) < MIN_CHARS or any(o.endswith(shorter) for o in ids if o != m)


def test_rdkafka_and_kafka_uuid_ids_sharing_a_long_start():
    rng = random.Random(48)
    ids = [f"rdkafka-{uuid.UUID(int=rng.getrandbits(128))}" for _ in range(300)]
    ids += [f"kwire-consumer-with-a-long-client-id-{uuid.UUID(int=rng.getrandbits(128))}" for _ in range(300)]
    labels = check({m: m.rsplit("-", 5)[0] for m in ids})
    assert all(part.startswith("…") and len(part) <= 1 + 6 for _, part in labels.values())


def test_kip848_ids_base64_uuids():
    rng = random.Random(848)
    ids = [base64.b64encode(rng.randbytes(16)).decode().rstrip("=") for _ in range(500)]
    check({m: "kwire-consumer-1" for m in ids})


def test_ids_that_differ_only_in_the_middle_are_numbered():
    ids = ["x" * 100 + ch + "y" * 100 for ch in "ABC"]
    labels = check({m: "c" for m in ids})
    assert sorted(p for _, p in labels.values()) == ["…" + "y" * 13 + f" #{n}" for n in (1, 2, 3)]


def test_ids_sharing_their_end_are_told_apart_by_their_start():
    ids = ["alpha-" + "z" * 80, "beta-" + "z" * 80]
    assert member_parts(ids) == {ids[0]: "alph…", ids[1]: "beta…"}


def test_short_ids_and_ids_that_end_another_are_shown_whole():
    ids = ["m1", "am1", "m12345", "xm12345"]
    assert member_parts(ids) == {m: m for m in ids}


def test_hostile_ids_never_show_a_raw_control_nor_an_escape_cut_in_two():
    ids = ["\x1b]0;pwned\x07" * 5, "\x1b[2J\x1b[H" * 5, "\u202e" * 30, "\\x1b" * 8 + "\x1b" * 8,
           "\x1b" * 8 + "\\x1b" * 8, "[bold red]markup[/]", "<script>x</script>"]
    labels = check({m: "\x1b]0;t\x07\u202e" + "c" * 40 for m in ids})
    for client, part in labels.values():
        assert not any(ch in client + part for ch in "\x1b\x07\u202e")
        assert client == "\\x1b]0;t\\x07…"  # cut before the escape that does not fit, never inside it
    ends = piece(labels["\u202e" * 30][1])
    assert re.fullmatch(r"(\\u202e)+", ends)  # whole escapes only


def test_ids_shown_alike_get_distinct_labels():
    """An ESC and the four characters `\\x1b` are shown alike: term_safe alone would not tell them apart."""
    ids = ["\x1b[2J" + "z" * 30, "\\x1b[2J" + "z" * 30]
    labels = check({m: None for m in ids})
    assert sorted(p for _, p in labels.values()) == ["…" + "z" * 13 + " #1", "…" + "z" * 13 + " #2"]


def test_a_client_id_running_into_a_part_is_numbered():
    """`a b` + `c` and `a` + `b c` would read alike."""
    labels = check({"c": "a b", "b c": "a"})
    assert label_text(*labels["c"]) != label_text(*labels["b c"])


def test_client_ids_are_cut_to_their_columns_wide_characters_counted_twice():
    labels = check({"m-0001": "消费者" * 10, "m-0002": "kwire-" + "c" * 40, "m-0003": None})
    assert labels["m-0001"][0] == "消费者" * 2 + "消费…" and labels["m-0002"][0].endswith("…")
    assert labels["m-0003"] == ("", "m-0003")


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(alphabet="ab\x1b\\x1…é消", min_size=1, max_size=30),
                       st.one_of(st.none(), st.text(alphabet="a b…\x07", max_size=30)), min_size=1, max_size=40))
def test_any_members_get_distinct_safe_bounded_labels(members):
    check(members)


ROW = re.compile(r'<text class="member"[^>]*><title>member (.*?) · client id (.*?)</title>(.*?)'
                 r'<tspan font-weight="600">(.*?)</tspan></text>')


def timeline_rows(page: str) -> list[tuple[str, str, str, str]]:
    """(member id, client id, label's client, label's part) of every row of every timeline, unescaped."""
    return [tuple(html.unescape(v) for v in row) for row in ROW.findall(page)]


def test_each_member_the_clients_saw_has_its_own_row_and_label():
    """The member ids come from the clients' own callbacks (truth files), not from kwire."""
    for name in ("rebalance-storm", "member-expired", "kip848-expired"):
        seen = {e["member_id"]: e["who"] for e in P.of(name, "assigned") if e.get("member_id")}
        assert len(seen) >= 2
        rows = timeline_rows(groups_section(P.document(name)))
        labels = [f"{client}{part}" for _, _, client, part in rows]
        assert len(set(labels)) == len(rows)
        by_id = {member_id: (client, part) for member_id, _, client, part in rows}
        for member_id, who in seen.items():
            client, part = by_id[member_id]
            assert client.strip() == who and piece(part) in member_id
            assert member_id.endswith(piece(part)) if part.startswith("…") else True
        cut = [m[:10] for m in seen]
        if len(set(cut)) < len(cut):  # the case: a cut to the first characters did not tell them apart
            assert all(len(piece(part)) < 10 for _, part in by_id.values())


def test_the_members_table_gives_each_rows_part_beside_its_id():
    page = groups_section(P.document("rebalance-storm"))
    table = re.findall(r'<tr><td class="l part">(.*?)</td><td class="n l">(.*?)</td>', page)
    rows = {member_id: part for member_id, _, _, part in timeline_rows(page)}
    assert table and {html.unescape(m): html.unescape(p) for p, m in table} == rows
