"""Entry point for spark-submit: the `kwire spark` command run as a Spark application.

    spark-submit --master spark://host:7077 "$(python -m kwire.spark.submit --path)" ARCHIVE... --json

Under spark-submit the session (master, executors, memory) is the one spark-submit configured;
the arguments are those of `kwire spark`. `python -m kwire.spark.submit --path` prints this
file's path for the command line above.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--path"]:
        print(__file__)
        return
    from kwire.cli.main import cli

    cli(["spark", *argv], prog_name="kwire")


if __name__ == "__main__":
    main()
