"""scripts/spark_scale.py: the model's arithmetic, against figures worked out by hand."""

from __future__ import annotations

import pytest

from tests.script_module import script_module

spark_scale = script_module("spark_scale")

# 1 s of map task time and 2 s of later stages per 100 MB, half a byte of shuffle per byte, a result of 1,000
# bytes and 200 per file report, merged in 1 ms and 10 us per report.
FIG = {"startup_s": 10.0, "fixed_s": 5.0, "map_s_per_byte": 1e-8, "reduce_s_per_byte": 2e-8, "shuffle_per_byte": 0.5,
       "result_bytes": 1000, "report_bytes": 200, "merge_s": 0.001, "report_merge_s": 1e-5}
TB, MB100 = 1e12, 1e8


def test_merge_levels_follow_the_tree_down_to_fan_in():
    assert spark_scale.merge_levels(200) == [200, 25]      # 200 -> 25 -> 4 left for the driver
    assert spark_scale.merge_levels(2000) == [2000, 250, 32]  # -> 4
    assert spark_scale.merge_levels(20) == [20]              # -> 3
    assert spark_scale.merge_levels(8) == []                 # the driver takes 8 at once
    assert spark_scale.merge_levels(100, 3) == [100, 34, 12, 4]  # -> 2


def test_a_result_with_every_file_report():
    assert spark_scale.result_bytes(FIG, 10_000) == 1000 + 10_000 * 200
    assert spark_scale.result_merge_s(FIG, 10_000) == pytest.approx(0.101)
    assert spark_scale.result_bytes(FIG, 0) == 1000


@pytest.mark.parametrize("cores, steps, levels", [(10, 5 + 8 * 2, 1), (100, 5 + 8 * 3, 2), (1000, 5 + 8 * 4, 3)])
def test_merge_time_is_the_tree_depth_times_one_merge_and_the_reports_once_a_level(cores, steps, levels):
    # each decode task merges its 4 reduce tasks' results and its own (5), then 8 per level and 8 on the driver,
    # 1 ms each; the 10,000 reports (0.1 s) once on the decode task, once a level and once on the driver
    assert spark_scale.merge_time(FIG, 10_000, cores) == pytest.approx(steps * 0.001 + (levels + 2) * 0.1)


def test_100_cores():
    row, = spark_scale.table(FIG, TB, MB100, [100])
    assert row["files"] == 10_000 and row["waves"] == 100
    # 10 + 5 + 100 waves of 1 s + 2e-8 * 1e12 / 100 (200 s) + 29 merges of 1 ms + 4 merges of the reports, 0.1 s
    assert row["time_s"] == pytest.approx(10 + 5 + 100 + 200 + 0.029 + 0.4)
    # 0.5 TB, and the tree's first two levels (200 and 25 partials) of 1,000 bytes each, one a level with the
    # 2,000,000 bytes of reports
    assert row["shuffle_bytes"] == pytest.approx(5e11 + 225 * 1000 + 2 * 2_000_000)
    assert row["driver_bytes"] == 9 * 1000 + 2_000_000
    assert row["collected_bytes"] == 800 * 2_001_000 + 200 * 1000


def test_waves_round_up():
    assert spark_scale.waves(10_000, 1000) == 10
    assert spark_scale.waves(10_001, 1000) == 11
    row, = spark_scale.table(FIG, TB, MB100, [1000])
    assert row["waves"] == 10
    assert row["time_s"] == pytest.approx(10 + 5 + 10 * 1 + 20 + 37 * 0.001 + 5 * 0.1)


def test_render_prints_one_row_per_core_count():
    text = spark_scale.render(spark_scale.table(FIG, TB, MB100, [10, 100, 1000]))
    lines = text.splitlines()
    assert len(lines) == 2 + 3
    assert lines[3].startswith("| 100 | 10,000 | 100 | 5.3 min | 0.4 s | 500.0 GB | 2.0 MB | 1.60 GB |")
