"""Opening the published warehouse for readers (pipeline/marts/warehouse.py): a Ctrl-C while it is
opened becomes exit 130 at the command line; what the one line says when it cannot be opened; readers
at once in one process."""

import os
import shutil
import socket
import threading

import duckdb
import pytest
from cli_process import baccarat, one_line_refusal

from pipeline.errors import BaccaratError, WorldFailure
from pipeline.marts import warehouse
from pipeline.marts.bounds import Bounds


def test_ctrl_c_while_the_warehouse_is_confined_is_130_from_main_and_the_connection_is_closed(cli, tmp_path,
                                                                                            monkeypatch):
    """open_warehouse leaves the Ctrl-C (DuckDB's RuntimeError) to main(), the one place that words it."""
    path = tmp_path / "warehouse.duckdb"
    duckdb.connect(str(path)).close()
    opened = []

    def interrupted(con, stable, more_memory):
        opened.append(con)
        raise RuntimeError("Query interrupted")

    monkeypatch.setattr(warehouse, "_confine", interrupted)
    assert cli("sql", "--warehouse", path, "SELECT 1") == (130, "", "error: interrupted\n")
    [con] = opened
    with pytest.raises(duckdb.ConnectionException, match="closed"):
        con.execute("SELECT 1")



def test_sql_with_a_warehouse_given_was_refused_for_the_default_out_it_does_not_read(cli, tmp_path, monkeypatch):
    """`baccarat sql --warehouse FILE` in a folder whose path holds '%20' was refused (exit 2) for ./data, a
    folder the command does not read and the user never named (a new user's trial)."""
    path = tmp_path / "warehouse.duckdb"
    duckdb.connect(str(path)).close()
    here = tmp_path / "100%20 off"
    here.mkdir()
    monkeypatch.chdir(here)
    assert cli("sql", "--warehouse", path, "SELECT 42 AS answer") == (0, "answer\n42\n", "")
    status, _, err = cli("sql", "SELECT 42")
    assert status == 2 and err.startswith(f"error: {str(here / 'data')!r}: a local folder whose path holds '%'")


def test_a_publish_replacing_the_file_while_a_reader_opens_it_is_read_from_the_new_file(tmp_path, monkeypatch):
    """A reader resolves the warehouse's link, then a publish points the link at its new file and removes
    the old one before the reader opens it: the reader opens the new file, where it failed with
    'database does not exist' (exit 1)."""
    target = tmp_path / "warehouse.duckdb"
    publishes = {name: tmp_path / "warehouse.duckdb.publishes" / name / "warehouse.duckdb" for name in ("old", "new")}
    for name, published in publishes.items():
        published.parent.mkdir(parents=True)
        with duckdb.connect(str(published)) as con:
            con.execute(f"CREATE TABLE publish AS SELECT '{name}' AS name")
    target.symlink_to(publishes["old"].relative_to(tmp_path))
    check_seal = warehouse.check_seal

    def publish_meanwhile(path, published):
        if published == publishes["old"]:
            target.unlink()
            target.symlink_to(publishes["new"].relative_to(tmp_path))
            shutil.rmtree(publishes["old"].parent)
        check_seal(path, published)

    monkeypatch.setattr(warehouse, "check_seal", publish_meanwhile)
    con = warehouse.open_warehouse(target)
    try:
        assert con.execute("SELECT name FROM publish").fetchall() == [("new",)]
    finally:
        con.close()


def test_marts_warehouse_naming_a_file_that_is_no_duckdb_database_replaced_it(tmp_path):
    """`baccarat marts --warehouse runs/_delta_log/00000000000000000000.json` (the command an error
    message offered) replaced the table's commit with a link to a warehouse: such a file is refused,
    untouched; a DuckDB file, a damaged `*.duckdb` and the link of an earlier publish are still replaced."""
    from pipeline.errors import BaccaratError
    from pipeline.marts.publish import check_warehouse_target

    commit = tmp_path / "00000000000000000000.json"
    commit.write_text('{"commitInfo": {}}\n')
    with pytest.raises(BaccaratError, match="is a file that is not a DuckDB database: it is left as it is"):
        check_warehouse_target(commit)
    assert commit.read_text() == '{"commitInfo": {}}\n' and not commit.is_symlink()
    duckdb.connect(str(tmp_path / "plain.db")).close()
    (tmp_path / "damaged.duckdb").write_bytes(b"")
    published = tmp_path / "linked.duckdb.publishes" / "20260101T000000-00000000" / "linked.duckdb"
    published.parent.mkdir(parents=True)
    published.write_bytes(b"")  # a publish's file that was emptied: the link is still the publish's
    (tmp_path / "linked.duckdb").symlink_to(published.relative_to(tmp_path))
    for name in ("plain.db", "damaged.duckdb", "linked.duckdb", "new.duckdb"):
        assert check_warehouse_target(tmp_path / name) == tmp_path / name


def test_a_file_that_is_no_warehouse_was_a_failure_offering_to_publish_over_it(cli, tmp_path):
    text = tmp_path / "passwd"
    text.write_text("root:x:0:0:root:/root:/bin/bash\n")
    status, out, err = cli("sql", "--warehouse", text, "SELECT 1")
    assert (status, out) == (2, "") and err.count("\n") == 1
    assert f"{text} is not a warehouse: it is not a DuckDB database file" in err and "--warehouse" not in err


@pytest.mark.parametrize("command", ["sql", "report"])
def test_the_root_folder_as_the_warehouse_was_a_traceback(cli, tmp_path, command):
    """`--warehouse /`, or a link to it: the root has no name, and Path.with_name raised ValueError."""
    link = tmp_path / "root.duckdb"
    link.symlink_to("/")
    rest = {"sql": ["SELECT 1"], "report": ["--out", tmp_path, "--page", tmp_path / "page.html"]}[command]
    for warehouse_path in ("/", link):
        status, out, err = cli(command, "--warehouse", warehouse_path, *rest)
        assert (status, out) == (2, "") and err.count("\n") == 1
        assert f"the warehouse {warehouse_path} is a folder, not a DuckDB file" in err


def special_file(kind: str, folder) -> str:
    """A FIFO, a socket or a device at a path a test names as the warehouse (the socket named relative to
    `folder`, the current folder, as an AF_UNIX path is at most 108 bytes)."""
    if kind == "device":
        return "/dev/null"
    if kind == "fifo":
        os.mkfifo(folder / "w.duckdb")
    else:
        with socket.socket(socket.AF_UNIX) as bound:
            bound.bind("w.duckdb")
    return str(folder / "w.duckdb")


SPECIAL_FILES = {"fifo": "a FIFO (a named pipe)", "socket": "a socket", "device": "a character device"}


@pytest.mark.parametrize("kind", SPECIAL_FILES)
def test_a_fifo_socket_or_device_as_the_warehouse_was_no_warehouse_at_it(tmp_path, monkeypatch, kind):
    """`sql --warehouse FIFO` said "no warehouse at FIFO (run `baccarat marts` first)": it says what is there,
    in a process of its own (given 60 s: the FIFO is never opened)."""
    monkeypatch.chdir(tmp_path)
    path = special_file(kind, tmp_path)
    done = baccarat(["sql", "--warehouse", path, "SELECT 1"], tmp_path)
    one_line_refusal(done.returncode, done.stdout, done.stderr,
                     f"the warehouse {path} is {SPECIAL_FILES[kind]}, not a DuckDB file")


def test_a_fifo_as_the_warehouse_to_publish_blocked_the_check_of_its_first_bytes(tmp_path):
    """`run --warehouse FIFO` (and `marts`) opened the FIFO to see whether it held a database of the user's own,
    and waited for a writer forever (in a process of its own, given 60 s)."""
    path = special_file("fifo", tmp_path)
    done = baccarat(["run", "--out", str(tmp_path / "data"), "--warehouse", path], tmp_path)
    one_line_refusal(done.returncode, done.stdout, done.stderr,
                     f"the warehouse {path} is a FIFO (a named pipe): it is left as it is")
    assert not (tmp_path / "data").exists()


@pytest.mark.parametrize("kind", ["socket", "device"])
def test_a_socket_or_device_as_the_warehouse_to_publish_says_what_it_is(tmp_path, monkeypatch, kind):
    """A socket named *.duckdb was a path a publish may replace (`run` went on to deal), /dev/null "a file
    that is not a DuckDB database"."""
    from pipeline.marts.publish import check_warehouse_path

    monkeypatch.chdir(tmp_path)
    path = special_file(kind, tmp_path)
    with pytest.raises(BaccaratError, match=f"^the warehouse {path} is {SPECIAL_FILES[kind]}: it is left as it is"):
        check_warehouse_path(path)


def test_a_memory_limit_too_small_to_open_the_warehouse_was_blamed_on_a_writer_holding_a_lock(cli, tmp_path):
    """DuckDB's 'failed to pin block' held the word 'lock'."""
    path = tmp_path / "warehouse.duckdb"
    duckdb.connect(str(path)).close()
    status, out, err = cli("sql", "--warehouse", path, "--memory-limit", "1KB", "SELECT 1")
    assert (status, out) == (2, "") and err.count("\n") == 1
    assert "cannot be opened within the memory limit" in err and "another process" not in err
    assert err.endswith("give it more with --memory-limit SIZE\n"), err


def test_a_memory_limit_a_bi_uri_tightened_says_to_loosen_it_there(tmp_path):
    """It said to give --memory-limit (or BACCARAT_SQL_MEMORY_LIMIT) more, while the bound was the URI's
    memory_limit= (a new user's trial)."""
    path = tmp_path / "warehouse.duckdb"
    duckdb.connect(str(path)).close()
    with pytest.raises(BaccaratError) as refused:
        warehouse.open_warehouse(path, Bounds.given().tightened({"memory_limit": "1KB"}))
    assert str(refused.value).endswith("give it more with a larger memory_limit= in the connection URI (at most "
                                       "BACCARAT_SQL_MEMORY_LIMIT)"), refused.value


def test_a_warehouse_published_inside_a_table_was_removed_by_its_vacuum(tmp_path):
    """`baccarat marts --warehouse data/rounds/w.duckdb` published into the rounds table's folder, where
    `baccarat vacuum` (delta-rs's full vacuum) counts the warehouse, its publishes and its seal as files no
    version needs, and removes them. Such a path is refused in one line, before anything is written there."""
    import deltalake
    import pyarrow as pa

    from pipeline.errors import BaccaratError
    from pipeline.marts.publish import check_warehouse_target

    rounds = tmp_path / "data" / "rounds"
    deltalake.write_deltalake(str(rounds), pa.table({"shoe_id": [0]}))
    before = sorted(rounds.rglob("*"))
    for target in (rounds / "w.duckdb", rounds / "run_id=a" / "w.duckdb"):
        with pytest.raises(BaccaratError, match=f"the warehouse '{target}' is within the Delta table {rounds}: "):
            check_warehouse_target(target)
    assert sorted(rounds.rglob("*")) == before
    assert check_warehouse_target(tmp_path / "data" / "w.duckdb") == tmp_path / "data" / "w.duckdb"


def test_a_view_whose_run_file_is_gone_names_verify_before_the_republish(cli, tmp_path):
    """The one line named only `baccarat marts --out OUT --warehouse PATH`, which fails (exit 1) when the
    file is gone because the run is damaged (marts refuses a damaged run, naming its repair): it names
    `baccarat verify`, which tells a damaged run (and its repair) from a stale warehouse, then the republish."""
    data = tmp_path / "data"
    part = data / "rounds" / "run_id=r" / "part-0.parquet"
    part.parent.mkdir(parents=True)
    path = data / "warehouse.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute(f"COPY (SELECT 1 AS shoe_id) TO '{part}' (FORMAT parquet)")
        con.execute(f"SET file_search_path = '{data}'")  # the views name their files as a publish does
        con.execute("CREATE VIEW rounds AS SELECT * FROM read_parquet('rounds/run_id=r/part-0.parquet')")
    part.unlink()
    status, out, err = cli("sql", "--warehouse", path, "SELECT 1")
    assert (status, out) == (1, "") and err.count("\n") == 1
    assert err.endswith(f"whose file {part} is gone: `baccarat verify --out {data}` names the repair if the run is "
                        f"damaged; then publish the warehouse again (baccarat marts --out {data} --warehouse {path})\n")


def test_a_warehouse_copied_away_from_its_data_folder_says_so(cli, tmp_path):
    """A copy of the warehouse file alone named `verify --out` a folder without tables: its views read the
    runs' files relative to the file's folder, and that folder holds none."""
    data = tmp_path / "data"
    part = data / "rounds" / "run_id=r" / "part-0.parquet"
    part.parent.mkdir(parents=True)
    with duckdb.connect(str(data / "warehouse.duckdb")) as con:
        con.execute(f"COPY (SELECT 1 AS shoe_id) TO '{part}' (FORMAT parquet)")
        con.execute(f"SET file_search_path = '{data}'")
        con.execute("CREATE VIEW rounds AS SELECT * FROM read_parquet('rounds/run_id=r/part-0.parquet')")
    (tmp_path / "elsewhere").mkdir()
    copy = tmp_path / "elsewhere" / "w.duckdb"
    shutil.copyfile(data / "warehouse.duckdb", copy)
    status, out, err = cli("sql", "--warehouse", copy, "SELECT 1")
    assert (status, out) == (1, "") and err.count("\n") == 1
    assert f"there is no {tmp_path / 'elsewhere' / 'rounds'}: a warehouse copied or moved away from its data " \
           "folder cannot read them" in err and "verify" not in err, err
    assert cli("sql", "--warehouse", data / "warehouse.duckdb", "SELECT count(*) AS n FROM rounds")[:2] == (0, "n\n1\n")


def test_a_link_a_user_made_to_the_warehouse_was_taken_for_a_copy_away_from_its_data(cli, tmp_path):
    """`ln -s data/warehouse.duckdb ~/w.duckdb` (for a BI tool, a shorter path): `baccarat sql --warehouse
    ~/w.duckdb` looked for the runs' files beside the user's link and said "a warehouse copied or moved away
    from its data folder cannot read them", exit 1. The files are named from the folder of the warehouse's
    own link, the one a publish points at its file."""
    data = tmp_path / "data"
    part = data / "rounds" / "run_id=r" / "part-0.parquet"
    published = data / "warehouse.duckdb.publishes" / "20261203T000000-0" / "warehouse.duckdb"
    for folder in (part.parent, published.parent, tmp_path / "home"):
        folder.mkdir(parents=True)
    with duckdb.connect(str(published)) as con:
        con.execute(f"COPY (SELECT 1 AS shoe_id) TO '{part}' (FORMAT parquet)")
        con.execute(f"SET file_search_path = '{data}'")
        con.execute("CREATE VIEW rounds AS SELECT * FROM read_parquet('rounds/run_id=r/part-0.parquet')")
    (data / "warehouse.duckdb").symlink_to(published.relative_to(data))
    (tmp_path / "home" / "w.duckdb").symlink_to(data / "warehouse.duckdb")
    (tmp_path / "home" / "again.duckdb").symlink_to("w.duckdb")
    for link in ("w.duckdb", "again.duckdb"):
        query = cli("sql", "--warehouse", tmp_path / "home" / link, "SELECT count(*) AS n FROM rounds")
        assert query == (0, "n\n1\n", ""), query


def test_readers_at_once_in_one_process_share_the_file_each_confined_and_closed_alone(tmp_path):
    """Two connections at once in one process (a BI server's threads, a SQLAlchemy pool) failed: DuckDB
    opens a file once per process with one configuration, and each opening asked for a spill folder of its
    own. Now they share the file's database, query it at the same time, and closing one leaves the other."""
    path = tmp_path / "warehouse.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE numbers AS SELECT range AS n FROM range(2000000)")
    first, second = warehouse.open_warehouse(path), warehouse.open_warehouse(path)
    answers, started = {}, threading.Barrier(2)

    def query(name, con):
        started.wait()
        answers[name] = con.execute("SELECT sum(n % 7) FROM numbers, range(5)").fetchone()[0]

    threads = [threading.Thread(target=query, args=item) for item in (("first", first), ("second", second))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers == {"first": 5 * sum(n % 7 for n in range(2000000))} | {"second": answers["first"]}
    first.close()
    assert second.execute("SELECT count(*) FROM numbers").fetchone() == (2000000,)
    for statement, refused in (("CREATE TABLE more (n INT)", duckdb.InvalidInputException),
                               (f"COPY numbers TO '{tmp_path / 'out.csv'}'", duckdb.PermissionException),
                               ("SET enable_external_access = true", duckdb.InvalidInputException)):
        with pytest.raises(refused):
            second.execute(statement)
    second.close()
    assert not (tmp_path / "out.csv").exists()


def test_a_reader_asking_other_bounds_than_the_open_ones_is_one_line_saying_so(tmp_path):
    path = tmp_path / "published" / "warehouse.duckdb"
    path.parent.mkdir()
    duckdb.connect(str(path)).close()
    first = warehouse.open_warehouse(path, Bounds(threads=1, temp_directory=tmp_path / "spill"))
    try:
        with pytest.raises(WorldFailure) as refused:
            warehouse.open_warehouse(path, Bounds(threads=2, temp_directory=tmp_path / "spill"))
    finally:
        first.close()
    assert str(refused.value) == (
        f"warehouse {path} cannot be opened (Connection Error: Can't open a connection to same database file with a "
        "different configuration than existing connections); this process has it open in another connection with "
        "other bounds (threads, memory_limit, max_temp_directory_size) or settings: give every connection of the "
        "process the same bounds")
    # once the first is closed, though still referenced, other bounds open the file anew
    other = warehouse.open_warehouse(path, Bounds(threads=2, temp_directory=tmp_path / "spill"))
    assert other.execute("SELECT current_setting('threads')").fetchone() == (2,)
    other.close()


def test_a_reader_of_a_file_changed_since_another_opened_it_is_refused(tmp_path):
    """The seal is checked at every opening, not only the first of the process."""
    path = tmp_path / "warehouse.duckdb"
    duckdb.connect(str(path)).close()
    warehouse.seal(path)
    first = warehouse.open_warehouse(path)
    try:
        with path.open("ab") as changed:
            changed.write(b"\0")
        with pytest.raises(WorldFailure, match="was changed after it was published"):
            warehouse.open_warehouse(path)
    finally:
        first.close()


def open_files() -> set[str]:
    return {os.path.realpath(f"/proc/self/fd/{fd}") for fd in os.listdir("/proc/self/fd")}


def test_the_file_of_an_older_publish_is_let_go_once_its_readers_are_closed(tmp_path):
    """A long-running BI server must not keep the files a publish removed open (their space would not come
    back), nor may a file whose readers are closed stay open in the process for another client."""
    target = tmp_path / "warehouse.duckdb"
    publishes = [tmp_path / "warehouse.duckdb.publishes" / name / "warehouse.duckdb" for name in ("old", "new")]
    for published in publishes:
        published.parent.mkdir(parents=True)
        duckdb.connect(str(published)).close()
    target.symlink_to(publishes[0])
    first, second = warehouse.open_warehouse(target), warehouse.open_warehouse(target)
    target.unlink()
    target.symlink_to(publishes[1])
    held = warehouse.open_warehouse(target)
    first.close()
    assert str(publishes[0]) in open_files()  # a reader of it is left
    second.close()
    assert str(publishes[0]) not in open_files() and str(publishes[1]) in open_files()
    with duckdb.connect(str(publishes[0])) as con:  # as another client, read-write: no longer open here
        con.execute("CREATE TABLE after AS SELECT 1 AS n")
    held.close()


def test_a_data_folder_copied_following_the_warehouse_link_keeps_its_seal_checked(cli, tmp_path):
    """`cp -rL data copy` (or `scp -r`) made the warehouse's link a plain file with no seal beside it, and a
    client that then wrote into it was read as a warehouse published before seals: every reader saw its
    writes (a new user's trial). The copy is checked against the seals of the publishes beside it."""
    data = tmp_path / "data"
    published = data / "warehouse.duckdb.publishes" / "20261205T000000-0" / "warehouse.duckdb"
    published.parent.mkdir(parents=True)
    with duckdb.connect(str(published)) as con:
        con.execute("CREATE TABLE outcome_summary AS SELECT 'B' AS outcome")
    warehouse.seal(published)
    (data / "warehouse.duckdb").symlink_to(published.relative_to(data))
    copy = tmp_path / "copy"
    shutil.copytree(data, copy, symlinks=False)
    assert not (copy / "warehouse.duckdb").is_symlink()
    query = ("--warehouse", copy / "warehouse.duckdb", "SELECT count(*) AS n FROM outcome_summary")
    assert cli("sql", *query) == (0, "n\n1\n", "")
    with duckdb.connect(str(copy / "warehouse.duckdb")) as con:
        con.execute("DELETE FROM outcome_summary")
    status, out, err = cli("sql", *query)
    assert (status, out, err.count("\n")) == (1, "", 1) and "was changed after it was published" in err, err
