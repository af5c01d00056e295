"""After `kill -9` of a running `simulate`, its tasks' temporary files (.tmp, hidden) stayed in the run
folders: `verify` said every file checks out, `vacuum` (delta-rs skips hidden files) never removed them,
and only a later write of the same run, ten minutes on, did. `verify` names them and the command that
removes them; `vacuum` removes those no writer has touched for STALE_SECONDS, as a job's own clean-up does."""

import contextlib
import os
import shlex
import time

import pyarrow as pa
import pytest
from deltalake import write_deltalake

from pipeline.storage import STALE_SECONDS, Store


@pytest.fixture(params=["beside a table", "before any commit"])
def interrupted(tmp_path, request):
    """Two temporaries of a killed job in a run folder: one untouched for longer than STALE_SECONDS, one
    written a moment ago; beside a table, or in a store the killed job was the first to write to (then
    `verify` and `vacuum` said "no table in OUT ... (is --out the folder ...?)", exit 2, and no command
    removed them). The table holds no run: rows of a run with no runs row are damage verify names
    (pipeline/orphans.py)."""
    if request.param == "beside a table":
        empty = pa.table({"x": pa.array([], pa.int64()), "run_id": pa.array([], pa.string())})
        write_deltalake(str(tmp_path / "rounds"), empty, partition_by=["run_id"])
    folder = tmp_path / "rounds" / "run_id=killed"
    folder.mkdir(parents=True)
    old, new = folder / ".part-0-9-abc.parquet.job1.aaaa.tmp", folder / ".part-10-19-abc.parquet.job1.bbbb.tmp"
    old.write_bytes(b"x" * 3000)
    new.write_bytes(b"x" * 1000)
    then = time.time() - STALE_SECONDS - 60
    os.utime(old, (then, then))
    return tmp_path, old, new


def test_verify_names_the_temporaries_of_an_interrupted_write_and_what_removes_them(cli, interrupted):
    out_folder, _, _ = interrupted
    status, out, err = cli("verify", "--out", out_folder)
    assert (status, err) == (0, "")
    first, note = out.splitlines()
    assert first.startswith("verified 0 runs")
    assert note == (f"note: 2 temporary files (4,000 bytes), which no table reads, in "
                    f"{out_folder / 'rounds' / 'run_id=killed'}: an interrupted write's, unless a job is writing "
                    f"there now; `baccarat vacuum --out {out_folder}` removes those no writer has touched for "
                    f"{STALE_SECONDS // 60} minutes")


def test_verify_json_lists_them(cli, interrupted):
    out_folder, old, new = interrupted
    status, out, _ = cli("verify", "--out", out_folder, "--json")
    assert status == 0 and f'"temporaries": ["{old}", "{new}"]' in out


@pytest.mark.parametrize(("dry_run", "verb", "left"), [("--dry-run", "would remove", 2), ("--no-dry-run", "removed", 1)])
def test_vacuum_removes_the_stale_ones_and_keeps_a_fresh_one(cli, interrupted, dry_run, verb, left):
    out_folder, old, new = interrupted
    status, out, err = cli("vacuum", "--out", out_folder, dry_run)
    assert (status, err) == (0, "")
    assert out.splitlines()[-2:] == [
        f"{out_folder}: {verb} 1 temporary file of an interrupted write (untouched for {STALE_SECONDS // 60} minutes)",
        f"{out_folder}: kept 1 temporary file touched in the last {STALE_SECONDS // 60} minutes (a job may be "
        "writing there); vacuum removes them once untouched that long"]
    assert new.exists() and old.exists() == (left == 2)


def test_an_interrupted_jobs_clean_up_removes_its_own_temporaries_only(tmp_path):
    """What a job removes at a Ctrl-C (pipeline/jobs.py): the temporaries its tasks write, named as
    create_file names them, and nothing else: not another attempt's, writing into the same run folder at
    the same time or dead long ago, and not a finished file."""
    store = Store.parse(str(tmp_path))
    with contextlib.ExitStack() as writing:  # the names two jobs' files are written under
        for job, name in (("job0", "part-0-9-abc.parquet"), ("job1", "part-0-9-abc.parquet")):
            writing.enter_context(store.create_file("rounds", "r", name, job)).write(b"rows")
        names = {path.name for path in (tmp_path / "rounds" / "run_id=r").iterdir()}
    folder = tmp_path / "rounds" / "run_id=r"
    for name in names:
        (folder / name).write_bytes(b"rows")
    own, = (name for name in names if ".job0." in name)
    stale = folder / ".part-10-19-abc.parquet.job2.cccc.tmp"
    stale.write_bytes(b"rows")
    then = time.time() - STALE_SECONDS - 60
    os.utime(stale, (then, then))
    store.remove_temporaries("rounds", "r", "job0", stale_seconds=None)
    finished = "part-0-9-abc.parquet"  # the two jobs' file, renamed into place
    assert sorted(path.name for path in folder.iterdir()) == sorted({*names - {own}, stale.name, finished})


def test_the_vacuum_verify_names_works_as_given_for_a_folder_with_a_space(cli, tmp_path):
    """The note's `baccarat vacuum --out DIR` was not quoted: for `--out 'my data'` it named `my` and `data`.
    The same holds for the other lines that name a command with OUT (shlex-quoted)."""
    out_folder = tmp_path / "my data"
    folder = out_folder / "rounds" / "run_id=killed"
    empty = pa.table({"x": pa.array([], pa.int64()), "run_id": pa.array([], pa.string())})
    write_deltalake(str(out_folder / "rounds"), empty, partition_by=["run_id"])
    folder.mkdir()
    old = folder / ".part-0-9-abc.parquet.job1.aaaa.tmp"
    old.write_bytes(b"x")
    then = time.time() - STALE_SECONDS - 60
    os.utime(old, (then, then))
    status, out, _ = cli("verify", "--out", out_folder)
    command = shlex.split(out.split("`")[1])
    assert status == 0 and command == ["baccarat", "vacuum", "--out", str(out_folder)]
    assert cli(*command[1:])[0] == 0 and not old.exists()
