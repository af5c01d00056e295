"""A mart's file damaged in place, its size kept (8 bytes overwritten, as a bad disk or a stray write does): every
reader of the mart failed on it (`ZSTD Decompression failure`; `baccarat marts --run-id OTHER` exited 1 with
"cannot write the warehouse"), yet `verify` checked only its size and said every file checks out (exit 0).
A mart's commit records its files' SHA-256 and verify checks them. No JVM."""

from types import SimpleNamespace

import pyarrow as pa

from pipeline.marts import publish
from pipeline.repair import verify_store
from pipeline.storage import Store


def test_verify_names_a_mart_file_whose_bytes_changed_in_place(tmp_path):
    out = Store.parse(str(tmp_path))
    run = SimpleNamespace(run_id="punto_banco-s1-n20", out=out, rule_set=SimpleNamespace(name="punto_banco"))
    [path] = publish._commit(run, "outcome_summary", pa.table({}), 1)
    assert verify_store(out) == ([], 0)
    with open(tmp_path / path, "r+b") as file:
        file.seek(8)
        file.write(b"X" * 8)
    [line], _ = verify_store(out)
    assert line == (f"{tmp_path / path}: fails the SHA-256 its commit records; repair: baccarat marts --out "
                    f"{tmp_path}")
