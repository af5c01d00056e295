"""A Ctrl-C while a mart's query calls into Python (pipeline/marts/partials.py, reading_run_files)."""

from types import SimpleNamespace

import duckdb
import pyarrow as pa
import pytest

from pipeline.marts.partials import reading_run_files

RUN = SimpleNamespace(run_id="punto_banco-s1-n20", out=SimpleNamespace(uri="/data"))


class CtrlCOnRead:
    """A registered table that meets the Ctrl-C: Python raises KeyboardInterrupt in the first Python code the
    query calls, as in the finals' registered tables (schema, row count, stream) on the main thread."""

    def __arrow_c_schema__(self):
        return pa.schema([("rounds", pa.int64())]).__arrow_c_schema__()

    def __arrow_c_stream__(self, requested_schema=None):
        raise KeyboardInterrupt


def test_a_ctrl_c_inside_a_registered_table_was_a_damaged_run_with_status_1():
    """`baccarat marts` Ctrl-C'd while DuckDB read a table the finals register (`checkpoints`) said "its marts
    cannot be built from its files ... check them with `baccarat verify`" and exited 1: DuckDB reports the
    KeyboardInterrupt as an InvalidInputException. It is an interruption (status 130)."""
    con = duckdb.connect()
    con.register("checkpoints", CtrlCOnRead())
    with pytest.raises(KeyboardInterrupt), reading_run_files(RUN):
        con.sql("SELECT count(*) FROM checkpoints").fetchall()


def test_other_engine_errors_still_name_the_run_and_verify():
    con = duckdb.connect()
    with pytest.raises(OSError, match=r"run 'punto_banco-s1-n20': its marts cannot be built from its files "
                                      r"\(.*\): check them with `baccarat verify --run-id punto_banco-s1-n20"):
        with reading_run_files(RUN):
            con.sql("SELECT * FROM read_parquet('/nonexistent/x.parquet')").fetchall()
