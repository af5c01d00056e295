"""The one line a failure of the store is said in (pipeline.storage.errors.first_line)."""

from pipeline.storage.errors import first_line

# What deltalake 1.x raised for a commit whose log folder refuses a new file (`chattr +i _delta_log`, a
# read-only mount): `baccarat simulate` ended in "commit to OUT/runs failed: Generic LocalFileSystem error".
REFUSED_COMMIT = ("Generic LocalFileSystem error\n          \x1b[31m↳\x1b[0m Unable to open file /d/runs/_delta_log/"
                  "00000000000000000001.json#1\n           \x1b[31m↳\x1b[0m Operation not permitted (os error 1)\n")


def test_a_refused_commit_named_neither_the_file_nor_the_reason():
    assert first_line(OSError(REFUSED_COMMIT)) == ("Generic LocalFileSystem error: Unable to open file "
                                                   "/d/runs/_delta_log/00000000000000000001.json#1: "
                                                   "Operation not permitted (os error 1)")


def test_other_lines_than_causes_are_left_out():
    assert first_line(ValueError("bad row\nat line 3\n↳ not a cause here")) == "bad row"
    assert first_line(OSError()) == "OSError"
