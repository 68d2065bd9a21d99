"""Test-only: one bad file among many (issue 49): a directory of captures for `kwire stats DIR` and `kwire spark DIR`.

`write_dir(folder, seed, scale)` writes, and returns the paths by role:
- "good": three committed captures (a three-broker cluster, a share consumer, a producer and consumer), and
  the capture that once failed the whole run (tests/hostile3/nulls.py: SyncGroup with null member ids, a
  config with a null name), which must now count like the others;
- "fault": a capture of one consumer-group exchange of group FAULT_GROUP: a test makes kwire fail on it on
  purpose (`inject_fault`: the group reader raises for that group, as a bug would), so the file is left out
  and named while the others' results are kept;
- "damaged": a file that is not a capture, and one cut inside its first record header (kwire's own
  one-line errors; their good packets, none, are used).
`scale` repeats the fault capture's exchanges (its connection) that many times.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.fuzz.conversation import conversation_pcap
from tests.hostile3.nulls import write_capture
from tests.render.hostile import exchange

ROOT = Path(__file__).resolve().parents[2]
GOOD = ("multi-broker-3.pcap", "share-consumer.pcap", "produce-consume-none.pcap")
FAULT_GROUP = "kwire-test-fault"
FAULT_MESSAGE = "an injected fault for group"


def write_dir(folder: Path, seed: int = 49, scale: int = 1) -> dict[str, list[Path]]:
    folder.mkdir(parents=True, exist_ok=True)
    good = []
    for name in GOOD:
        good.append(folder / name)
        shutil.copyfile(ROOT / "captures" / name, good[-1])
    good.append(folder / "nulls-sync-group.pcap")
    write_capture(good[-1], seed, kinds=("lenient",), apis=(14,))
    fault = folder / "fault.pcap"
    messages = []
    for corr in range(1, scale + 1):
        messages += exchange(12, 4, corr, "faulty-consumer",
                             {"GroupId": FAULT_GROUP, "GenerationId": 1, "MemberId": "m-1"}, {"ErrorCode": 0})
    fault.write_bytes(conversation_pcap(messages, start_ns=1_795_305_690 * 10**9))
    garbage = folder / "zz-not-a-capture.pcap"
    garbage.write_bytes(b"this is not a capture file\n" * 4)
    cut = folder / "zz-cut.pcap"
    cut.write_bytes((ROOT / "captures" / GOOD[0]).read_bytes()[:30])
    return {"good": good, "fault": [fault], "damaged": [garbage, cut]}


def inject_fault() -> None:
    """Make kwire's Heartbeat reader raise for FAULT_GROUP (kwire.analytics.observe_groups, plain Python in
    both builds): what a bug met by one file's traffic does. For a test's process, or a sitecustomize."""
    from kwire.analytics import observe_groups

    reader = observe_groups._READERS["Heartbeat"]

    def faulty(ex, group, out):
        if group == FAULT_GROUP:
            raise RuntimeError(f"{FAULT_MESSAGE} {group}")
        reader(ex, group, out)

    observe_groups._READERS["Heartbeat"] = faulty
