"""Time the readable views of `kwire inspect` on crafted captures (issue 12: a body of 100,000 tagged
fields took half a minute in the tree view where JSON took a second).

    python scripts/bench_tree_view.py [--repeat 3] [--base DIR]

Builds, with the tests' own writers (tests/render/hostile.py), in a temporary folder:
- flood-10k.pcap, flood-100k.pcap: one ApiVersions v3 request carrying 10,000 / 100,000 unknown
  tagged fields;
- produce-5k.pcap: 5,000 Produce exchanges of one record each.
and times `python -m kwire inspect` (lines), `inspect -V` (trees) and `inspect --json` on each: wall
seconds, best of --repeat. `--base DIR` also times another checkout of kwire (e.g. `git archive` of
an older commit unpacked in DIR) with the same commands, alternating with this one.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.codec.test_records_encoder import v2_batch  # noqa: E402
from tests.fuzz.conversation import conversation_pcap  # noqa: E402
from tests.render.hostile import exchange, tagged_flood  # noqa: E402


def captures(folder: Path) -> list[Path]:
    out = []
    for n, name in ((10_000, "flood-10k.pcap"), (100_000, "flood-100k.pcap")):
        path = folder / name
        path.write_bytes(tagged_flood(n))
        out.append(path)
    batch = v2_batch([(b"k", b"v" * 50)])
    messages = []
    for i in range(5000):
        messages += exchange(0, 9, i + 1, "producer-1",
                             {"Acks": -1, "TimeoutMs": 30000,
                              "TopicData": [{"Name": "orders", "PartitionData": [{"Index": i % 6, "Records": batch}]}]},
                             {"Responses": [{"Name": "orders", "PartitionResponses": [{"Index": i % 6}]}]})
    path = folder / "produce-5k.pcap"
    path.write_bytes(conversation_pcap(messages))
    out.append(path)
    return out


# Before the one-line view, the tree was inspect's default and there was no -V.
OLD_FLAGS = {"lines": None, "-V": [], "--json": ["--json", "-j", "0"]}


def timed(code_root: Path, args: list[str]) -> float:
    env = dict(os.environ, PYTHONPATH=str(code_root))
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "kwire", "inspect", "--no-summary", *args], env=env, check=True, cwd=code_root,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--base", type=Path, default=None, help="another kwire checkout to time alongside")
    args = parser.parse_args()
    roots = [("this", ROOT)] + ([("base", args.base)] if args.base else [])
    with tempfile.TemporaryDirectory(prefix="kwire-bench-tree-") as tmp:
        paths = captures(Path(tmp))
        print(f"{'capture':18} {'view':8} " + " ".join(f"{name:>10}" for name, _ in roots))
        for path in paths:
            for view, extra in (("lines", []), ("-V", ["-V"]), ("--json", ["--json", "-j", "0"])):
                best: dict[str, float | None] = {name: None for name, _ in roots}
                for _ in range(args.repeat):  # the checkouts alternate
                    for name, root in roots:
                        flags = extra if name == "this" else OLD_FLAGS[view]
                        if flags is None:
                            continue
                        took = timed(root, [*flags, str(path)])
                        best[name] = took if best[name] is None else min(best[name], took)
                print(f"{path.name:18} {view:8} " + " ".join(
                    f"{best[name]:9.2f}s" if best[name] is not None else f"{'n/a':>10}" for name, _ in roots))


if __name__ == "__main__":
    main()
