"""Test-only: the second campaign's families (issue 25) as campaign cases: each a capture built by
tests/hostile/generators.py (with its key log beside it where it needs one) and a kwire command line
that used to take minutes, gigabytes, a hang or a traceback on it. `hostile(rng, name, scale)` makes
one; tests/campaign/cases.py draws every family once per seed, scripts/campaign.py at bigger scales
(each capture stays under 20 MB: the sizes grow with `scale` up to MAX_SCALE).
"""

from __future__ import annotations

import random
from typing import NamedTuple

from tests.hostile import generators as g

MAX_SCALE = 3
KEYS = "{out}/capture.pcap.keys"


class Family(NamedTuple):
    make: object  # make(path, rng, scale)
    suffix: str
    commands: tuple


FAMILIES = {
    "tls-detector-rescan": Family(lambda p, rng, s: g.tls_detector_rescan(p, s), ".pcap",
                                  (("stats",), ("inspect", "--json"))),
    "tls-gap-garbage": Family(lambda p, rng, s: g.tls_gap_garbage(p, s, rng.randrange(1 << 30)), ".pcap",
                              (("stats", "--keylog", KEYS), ("inspect", "--keylog", KEYS))),
    "assignment-repeats": Family(lambda p, rng, s: g.assignment_repeats(p, s), ".pcap",
                                 (("stats",), ("inspect", "-V"), ("inspect", "--json"))),
    "unanswered-joins": Family(lambda p, rng, s: g.unanswered_joins(p, s), ".pcap",
                               (("stats",), ("stats", "--html", "{out}/report.html"))),
    "excerpt-ranges": Family(lambda p, rng, s: g.excerpt_ranges(p, s), ".pcap",
                             (("inspect", "--api", "ApiVersions", "-w", "{out}/cut.pcap"),)),
    "many-names": Family(lambda p, rng, s: g.many_names(p, s), ".pcap",
                         (("stats",), ("stats", "--json"), ("stats", "--html", "{out}/report.html"))),
    "big-metadata": Family(lambda p, rng, s: g.big_metadata(p, s), ".pcap", (("inspect", "-V"), ("inspect", "--json"))),
    "secrets-block": Family(lambda p, rng, s: g.secrets_block(p, s, two_byte_lines=rng.random() < 0.5), ".pcapng",
                            (("stats",), ("inspect",))),
    "short-key-lines": Family(lambda p, rng, s: g.short_key_lines(p, s), ".pcap", (("stats", "--keylog", KEYS),)),
    "client-hellos": Family(lambda p, rng, s: g.client_hellos(p, s), ".pcap", (("stats",), ("inspect", "--json"))),
    "far-future": Family(lambda p, rng, s: g.far_future(p, rng.choice((300_000_000_000, 9_300_000_000))), ".pcapng",
                         (("stats", "--html", "{out}/report.html"), ("inspect",), ("stats", "--json"))),
    "midstream-fake-tls": Family(lambda p, rng, s: g.midstream_fake_tls(p, s, inside=rng.random() < 0.5), ".pcap",
                                 (("inspect", "--json"), ("stats",))),
    "big-first-request": Family(lambda p, rng, s: g.big_first_request(p, first=rng.choice(("produce", "fetch",
                                                                                           "inside")),
                                                                      handshake=rng.random() < 0.5), ".pcap",
                                (("inspect", "--json"), ("stats",))),
}


def hostile(rng: random.Random, name: str, scale: int):
    from tests.campaign.cases import Case

    family = FAMILIES[name]
    size = min(scale, MAX_SCALE)
    seed = rng.getrandbits(64)
    argv = rng.choice(family.commands)
    return Case(f"hostile-{name}", "hostile", family.suffix, argv,
                lambda path: family.make(path, random.Random(seed), size))
