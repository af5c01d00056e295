"""`baccarat runs --out FILE` (and every command that reads OUT) said "no output folder FILE" of a file
that is there: it says the path is a file, as simulate does, still bad input in one line. `baccarat sql` and
`baccarat report`, which read OUT's warehouse, said "no warehouse at FILE/warehouse.duckdb (run `baccarat
marts` first)", and marts then refused the same OUT."""

import pytest


@pytest.mark.parametrize("command", [["runs"], ["verify"], ["vacuum", "--dry-run"], ["sql", "SELECT 1"], ["report"]])
def test_a_file_given_as_out_was_said_to_be_no_output_folder(cli, tmp_path, command):
    afile = tmp_path / "afile"
    afile.write_text("keep me")
    status, out, err = cli(*command, "--out", afile)
    assert (status, out) == (2, "") and err == f"error: output path {afile} is a file, not a folder\n"
    assert afile.read_text() == "keep me"
