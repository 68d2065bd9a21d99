"""Short labels that tell the members of a consumer group apart: the rows of the HTML group timeline.

Member ids often share a long start: librdkafka's mock cluster hands out pointers (`0x7f1c680085b0`,
`0x7f1c680094c0`), brokers `<client.id>-<uuid>` (`rdkafka-3f2a…`), so a cut to the first characters
gives every member one label. `member_parts(member_ids)` gives each id the shortest piece that no
other id of the group shares, as the id is shown everywhere (kwire.safe_text.term_safe):
- its end, at least MIN_CHARS long (`…85b0`: no other id ends so), or the whole id when that short;
- else its start (`kwire-c…`: no other id starts so);
- else its last characters, numbered (`…a1b2 #2`) where they are not enough.
`member_labels(members)` (member id -> client id) puts the client id (cut to CLIENT_COLUMNS) before
each part: `kwire-flapper …c930` (`label_text`).

Guaranteed: two members of a group never get one label (nor one part); labels are made of whole
escapes (term_safe's, never cut in two), so they are printable text, for the caller to HTML-escape;
a part is (but for a `#n`) a piece of the member id as the JSON, the terminal and the report's tables
show it, so that a search finds the member; a part is at most PART_COLUMNS wide (a wide character
counts two), a label CLIENT_COLUMNS + 1 more, `#n`s aside. Sorting makes it O(n log n) in the members.
"""

from __future__ import annotations

import unicodedata
from collections import Counter

from kwire.safe_text import term_safe

MIN_CHARS = 4  # a part is at least this long (a search for it finds little else)
PART_COLUMNS = 14  # the widest part, its ellipsis counted
CLIENT_COLUMNS = 18  # the widest client id in a label, its ellipsis counted
ELLIPSIS = "…"


def _tokens(text: str) -> list[str]:
    """The id as shown, one piece per character: itself or its escape."""
    return [term_safe(ch) for ch in text]


def _columns(tokens: list[str]) -> int:
    """How wide these pieces are: an escape its length, an East Asian wide character two."""
    return sum(len(t) if len(t) > 1 else 2 if unicodedata.east_asian_width(t) in "WF" else 1 for t in tokens)


def _common_start(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _shared_starts(texts: list[str]) -> list[int]:
    """For each text, the length of the longest start it shares with any other (its sorted neighbours')."""
    order = sorted(range(len(texts)), key=texts.__getitem__)
    shared = [0] * len(texts)
    for a, b in zip(order, order[1:]):
        common = _common_start(texts[a], texts[b])
        shared[a], shared[b] = max(shared[a], common), max(shared[b], common)
    return shared


def _end_part(tokens: list[str], shared_end: int, unique: bool) -> str | None:
    """`…` and the shortest end longer than `shared_end` characters (at least MIN_CHARS pieces), or the
    whole id (when it is `unique`); None when that is wider than PART_COLUMNS."""
    length = 0
    for k in range(1, len(tokens) + 1):
        length += len(tokens[-k])
        whole = k == len(tokens)
        if _columns(tokens[-k:]) + (0 if whole else 1) > PART_COLUMNS:
            return None
        if whole:
            return "".join(tokens) if unique else None
        if k >= MIN_CHARS and length > shared_end:
            if unique and len(tokens) - k <= 2 and _columns(tokens) <= PART_COLUMNS:
                return "".join(tokens)  # a cut that leaves out two characters or fewer is no help
            return ELLIPSIS + "".join(tokens[-k:])
    return None


def _start_part(tokens: list[str], shared_start: int) -> str | None:
    """The shortest start longer than `shared_start` characters (at least MIN_CHARS pieces) and `…`;
    None when there is none narrower than PART_COLUMNS that leaves something out."""
    length = 0
    for k in range(1, len(tokens)):
        length += len(tokens[k - 1])
        if _columns(tokens[:k]) + 1 > PART_COLUMNS:
            return None
        if k >= MIN_CHARS and length > shared_start:
            return "".join(tokens[:k]) + ELLIPSIS
    return None


def _last_part(tokens: list[str]) -> str:
    """`…` and as many last pieces as fit PART_COLUMNS (at least one): the base of a numbered part."""
    k = 1
    while k < len(tokens) and _columns(tokens[-(k + 1):]) + 1 <= PART_COLUMNS:
        k += 1
    return ("" if k == len(tokens) else ELLIPSIS) + "".join(tokens[-k:])


def _numbered(parts: dict[str, str]) -> dict[str, str]:
    """The parts with those that two ids share made distinct by a number (`#1`, `#2`, by member id),
    never one that another part already is."""
    counts = Counter(parts.values())
    taken = {p for p, n in counts.items() if n == 1}
    out = {}
    for member_id in sorted(parts):
        part = parts[member_id]
        if counts[part] > 1:
            n = 1
            while f"{part} #{n}" in taken:
                n += 1
            part = f"{part} #{n}"
            taken.add(part)
        out[member_id] = part
    return out


def member_parts(member_ids) -> dict[str, str]:
    """Member id -> the shortest piece of it (as shown) that no other of `member_ids` shares."""
    ids = list(dict.fromkeys(member_ids))
    tokens = [_tokens(m) for m in ids]
    shown = ["".join(t) for t in tokens]
    repeated = Counter(shown)
    shared_end = _shared_starts([s[::-1] for s in shown])
    shared_start = _shared_starts(shown)
    parts = {}
    for i, member_id in enumerate(ids):
        parts[member_id] = (_end_part(tokens[i], shared_end[i], repeated[shown[i]] == 1)
                            or _start_part(tokens[i], shared_start[i]) or _last_part(tokens[i]))
    return _numbered(parts)


def _client(client_id: str) -> str:
    """The client id as shown, cut to CLIENT_COLUMNS (`…` where cut)."""
    tokens = _tokens(client_id)
    if _columns(tokens) <= CLIENT_COLUMNS:
        return "".join(tokens)
    k = 0
    while _columns(tokens[:k + 1]) + 1 <= CLIENT_COLUMNS:
        k += 1
    return "".join(tokens[:k]) + ELLIPSIS


def label_text(client: str, part: str) -> str:
    """A member's label as one string (what `member_labels` keeps distinct): client id, space, part."""
    return f"{client} {part}" if client else part


def member_labels(members: dict) -> dict[str, tuple[str, str]]:
    """Member id (-> client id, of `members`) -> (client id as shown and cut, part): the timeline's label
    is the two joined by a space (`label_text`). Distinct labels, distinct parts: where a hostile client id
    runs into a part (`a b` + `c`, `a` + `b c`), the parts of that label are numbered."""
    parts = member_parts(members)
    clients = {m: _client(c) if c else "" for m, c in members.items()}
    labels = {m: label_text(clients[m], parts[m]) for m in members}
    counts = Counter(labels.values())
    taken_parts, taken_labels = set(parts.values()), set(labels.values())
    for member_id in sorted(members):
        if counts[labels[member_id]] > 1:
            n = 1
            while (f"{parts[member_id]} #{n}" in taken_parts
                   or label_text(clients[member_id], f"{parts[member_id]} #{n}") in taken_labels):
                n += 1
            parts[member_id] = f"{parts[member_id]} #{n}"
            taken_parts.add(parts[member_id])
            taken_labels.add(label_text(clients[member_id], parts[member_id]))
    return {m: (clients[m], parts[m]) for m in members}
