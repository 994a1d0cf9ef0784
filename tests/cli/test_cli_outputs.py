"""CLI outputs never replace an input or a folder; inputs that are not regular files are refused at once."""
import os

import pytest

from fairviz.cli.outputs import OutputError, check_input, check_outputs, write_atomically


def test_an_output_that_is_the_input_is_refused(tmp_path):
    data = tmp_path / "data.csv"
    data.write_text("y,s,g\n")
    link = tmp_path / "alias.csv"
    link.symlink_to(data)
    for target in (data, link, tmp_path / "." / "data.csv"):
        with pytest.raises(OutputError, match="overwrite the input"):
            check_outputs([data], {"--dstar": target})
    assert data.read_text() == "y,s,g\n"


def test_outputs_inside_an_input_folder_folders_and_duplicates_are_refused(tmp_path):
    parts = tmp_path / "parts"
    parts.mkdir()
    with pytest.raises(OutputError, match="overwrite the input"):
        check_outputs([parts], {"--json": parts / "out.json"})
    with pytest.raises(OutputError, match="is a folder"):
        check_outputs([tmp_path / "x.csv"], {"--html": parts})
    with pytest.raises(OutputError, match="does not exist"):
        check_outputs([], {"--json": tmp_path / "missing" / "a.json"})
    with pytest.raises(OutputError, match="same file"):
        check_outputs([], {"--json": tmp_path / "a", "--html": tmp_path / "a"})
    check_outputs([tmp_path / "x.csv"], {"--json": tmp_path / "out.json", "--html": None, "--junit": "-"})


def test_a_fifo_is_refused_at_once(tmp_path):
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    with pytest.raises(OutputError, match="not a regular file"):
        check_input(fifo)
    check_input(tmp_path)                       # a folder (a Parquet data set) is fine
    check_input(tmp_path / "missing.csv")       # the reader names a missing file


def test_writes_are_atomic(tmp_path):
    target = tmp_path / "out.json"
    target.write_text("old")
    write_atomically(target, "new")
    assert target.read_text() == "new" and [p.name for p in tmp_path.iterdir()] == ["out.json"]
