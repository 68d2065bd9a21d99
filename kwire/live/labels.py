"""Bounded label values for the metrics: a cap per label, the rest folded into `other`, and counted.

Every label value of kwire's metric families (kwire.live.metric_families) comes off the wire: client
ids, brokers, topics, partitions, groups, api names and versions, error names. A capture of a
hostile or merely busy network (200,000 client ids) must not grow the exporter's memory or the
scrape without bound, so each label has a cap (`DEFAULT_CAPS`, changed with `--metrics-cap
LABEL=N`). `LabelCaps.value(label, raw)` returns `raw` while fewer than the cap's distinct values
of that label have been seen, or once `raw` is among them; any other value becomes OTHER, and
`folds[label]` counts the observations folded so (kwire_label_folds_total).

Live, values are kept first come, first kept, and stay kept: a series never moves between its
own name and `other`, so counters stay monotonic. For a capture read whole (`kwire stats
--metrics`) `ranked` keeps the busiest values instead (ties: the smaller), which does not depend
on the order parts of the capture were counted in.

`partition` is capped per (topic, partition) pair: a partition number means nothing without its
topic, and the pairs are what multiply series.

The values kept here are the raw ones; kwire.live.metric_families writes each as
kwire.safe_text.label_safe makes it (no control or bidi character raw, distinct values distinct).
"""

from __future__ import annotations

OTHER = "other"

# label -> the most distinct values kept (docs/metrics.md states them)
DEFAULT_CAPS = {
    "api": 128,          # Kafka defines about 90 api keys
    "api_version": 64,   # distinct versions over every api (0-18 today)
    "client_id": 200,
    "broker": 64,
    "error": 160,        # Kafka defines about 130 error codes
    "topic": 200,
    "partition": 2000,   # (topic, partition) pairs
    "group": 200,
}


def parse_cap(text: str) -> tuple[str, int]:
    """'client_id=500' -> ('client_id', 500); ValueError with a one-line reason otherwise."""
    label, sep, number = text.partition("=")
    label = label.strip()
    if not sep or label not in DEFAULT_CAPS:
        raise ValueError(f"{text!r}: expected LABEL=N with LABEL one of {', '.join(sorted(DEFAULT_CAPS))}")
    try:
        cap = int(number)
    except ValueError:
        raise ValueError(f"{text!r}: N must be a whole number") from None
    if cap < 1:
        raise ValueError(f"{text!r}: N must be at least 1")
    return label, cap


class LabelCaps:
    """The kept values of each capped label, and the folds."""

    __slots__ = ("caps", "kept", "folds", "sticky")

    def __init__(self, caps: dict[str, int] | None = None, *, sticky: bool = True):
        self.caps = dict(DEFAULT_CAPS)
        self.caps.update(caps or {})
        self.kept: dict[str, set] = {label: set() for label in self.caps}
        self.folds: dict[str, int] = dict.fromkeys(self.caps, 0)
        self.sticky = sticky  # live: first come, first kept; else the busiest (`ranked`)

    def value(self, label: str, raw):
        """`raw` when it is (or may become) a kept value of `label`, else OTHER (counted)."""
        kept = self.kept[label]
        if raw in kept:
            return raw
        if len(kept) < self.caps[label]:
            kept.add(raw)
            return raw
        self.folds[label] += 1
        return OTHER

    def admit(self, label: str, weights: dict) -> set:
        """The kept values of `label` once the values of `weights` (value -> weight, in the order
        they were first seen) have been offered: sticky caps keep the first, others the busiest.
        Nothing is counted in `folds` (see kwire.live.metric_families: distinct values folded)."""
        if not self.sticky:
            self.kept[label] = ranked(weights, self.caps[label])
            return self.kept[label]
        kept, cap = self.kept[label], self.caps[label]
        if len(kept) < cap:
            for value in weights:
                if value not in kept:
                    kept.add(value)
                    if len(kept) >= cap:
                        break
        return kept

    def copy_counts(self) -> tuple[dict[str, int], dict[str, int]]:
        """(label -> values kept, label -> observations folded), as plain new dicts."""
        return {label: len(v) for label, v in self.kept.items()}, dict(self.folds)


def ranked(weights: dict, cap: int) -> set:
    """The `cap` keys of `weights` with the largest weights (ties: the smaller key, as text)."""
    if len(weights) <= cap:
        return set(weights)
    order = sorted(weights.items(), key=lambda kv: (-kv[1], str(kv[0])))
    return {key for key, _ in order[:cap]}
