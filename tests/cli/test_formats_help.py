"""Words from the code: every command that reads captures says in its help which formats it reads, all of
them (the help said "pcap, pcapng, gzip of either" while zstd, lz4, xz and bzip2 were read too: issue 48)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from kwire.capture.decompress import FORMATS
from kwire.cli.main import cli


@pytest.mark.parametrize("command", ["inspect", "stats", "live"])
def test_the_help_names_every_format_read(command):
    result = CliRunner().invoke(cli, [command, "--help"], env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "pcap or pcapng" in text
    assert [f.name for f in FORMATS if f.name not in text] == []
