"""Reading the published warehouse. `open_warehouse` is the one way it is opened for readers:
`baccarat sql`, the report, and BI tools through the `duckdb+baccarat` SQLAlchemy dialect
(pipeline.marts.bi). It imports DuckDB alone, so a BI server needs nothing else of the pipeline."""

import hashlib
import os
import re
import shlex
from pathlib import Path

import duckdb

from pipeline.errors import BaccaratError, WorldFailure
from pipeline.marts.bounds import Bounds
from pipeline.user_files import is_duckdb_file, special_file

SEAL = ".sha256"  # beside a published file: its SHA-256 as the publish wrote it
PUBLISHES = ".publishes"  # the folder beside the warehouse's path that holds the published file
_QUOTED_PARQUET = re.compile(r"'((?:[^']|'')*\.parquet)'")
# OUT/<table>/run_id=<run>/<file>, of the tables the views of a warehouse on a local OUT read
_RUN_FILE = re.compile(r"(.*)/(?:rounds|shoes|marts/shoe_summary)/run_id=([^/]+)/[^/]+$")


def sql_string(text: str) -> str:
    """A DuckDB string literal."""
    return "'" + text.replace("'", "''") + "'"


def sql_list(texts: list[str]) -> str:
    """A DuckDB list literal of strings."""
    return "[" + ", ".join(map(sql_string, texts)) + "]"


def journal(path: Path) -> Path:
    """The write-ahead log DuckDB keeps beside a database file it opened read-write."""
    return path.with_name(path.name + ".wal")


def seal(published: Path) -> Path:
    """Record the published file's SHA-256 beside it, read-only; readers compare it (`check_seal`)."""
    sealed = published.with_name(published.name + SEAL)
    sealed.write_text(_sha256(published) + "\n", encoding="ascii")
    sealed.chmod(0o444)
    return sealed


REPUBLISHED_ATTEMPTS = 5  # publishes that may replace the file while a reader opens it, before the reader fails


def check_seal(path: Path, published: Path) -> None:
    """A published file that is no longer what the publish wrote (a client that could write it, its
    owner or root, changed it and closed it cleanly) is refused in one line; a file published before
    seals were recorded has none to compare. A copy of the data folder that followed the warehouse's link
    (`cp -rL`, `scp -r`) made the link a plain file without a seal beside it: it is what one of the
    publishes beside it wrote, or refused."""
    sealed = published.with_name(published.name + SEAL)
    if sealed.is_file():
        recorded = {sealed.read_text(encoding="ascii").strip()}
    else:
        publishes = published.with_name(published.name + PUBLISHES)
        recorded = {seal.read_text(encoding="ascii").strip() for seal in publishes.glob(f"*/{published.name}{SEAL}")}
    if recorded and _sha256(published) not in recorded:
        raise WorldFailure(f"the warehouse {path} was changed after it was published (its SHA-256 is not the "
                           f"one the publish recorded); it is not read: {_publish_again(path)}")


def _publish_again(path: Path) -> str:
    """What publishes the warehouse at `path` again; the warehouse does not record the OUT it was built from."""
    return (f"publish it again with `baccarat marts --out OUT --warehouse {shlex.quote(str(path))}`, OUT the "
            "folder or URI it was published from")


def _sha256(path: Path) -> str:
    with path.open("rb") as stream:
        return hashlib.file_digest(stream, "sha256").hexdigest()


def open_warehouse(path: Path, bounds: Bounds | None = None) -> duckdb.DuckDBPyConnection:
    """The published warehouse for readers: read-only, within `bounds` (default: `Bounds.given()`),
    reading no file but those its views name, with no extension to install or load and its settings
    locked; or a one-line error. `path` names the file of the last publish (pipeline.marts.publish),
    which is opened by its own name, so no journal a client wrote beside `path` is replayed. Run
    readers' SQL through `refuse_all_but_queries`: these settings alone let COPY write over a file a
    view reads."""
    stable = _publish_link(Path(path).absolute())
    if stable.is_dir():
        raise BaccaratError(f"the warehouse {path} is a folder, not a DuckDB file: name the file, as in "
                            f"--warehouse {Path(path) / 'warehouse.duckdb'}")
    if kind := special_file(stable):  # never opened: a FIFO would block
        raise BaccaratError(f"the warehouse {path} is {kind}, not a DuckDB file: name the file `baccarat marts` "
                            "published")
    if not stable.is_file():
        raise BaccaratError(f"no warehouse at {path} (run `baccarat marts` first)")
    bounds = bounds or Bounds.given()
    config, more_memory = bounds.config(stable.parent), bounds.more_of("memory_limit", "SIZE")
    for attempt in range(REPUBLISHED_ATTEMPTS):
        published = stable.resolve()
        try:
            con = _open_published(path, published, config, more_memory)
            break
        except (WorldFailure, OSError):
            # a publish that pointed `path` at its new file and removed this one meanwhile: open the new one
            if attempt == REPUBLISHED_ATTEMPTS - 1 or stable.resolve() == published:
                raise
    try:
        _confine(con, stable, more_memory)
    except BaseException:
        con.close()
        raise
    return con


def _open_published(path: Path, published: Path, config: dict, more_memory: str) -> duckdb.DuckDBPyConnection:
    if journal(published).exists():
        raise WorldFailure(f"the warehouse {path} has a journal {journal(published)} that no publish wrote (a "
                            f"client opened the file read-write); it is not read: {_publish_again(path)}")
    check_seal(path, published)
    try:
        return duckdb.connect(str(published), read_only=True, config={"autoinstall_known_extensions": "false",
                                                                      "autoload_known_extensions": "false", **config})
    except duckdb.Error as error:
        raise _cannot_open(path, error, more_memory) from None


WAREHOUSE_MART = "outcome_summary"  # a mart every publish holds, the layout before publishes too


def may_be_replaced(target: Path) -> bool:
    """Whether a publish may replace what is at `target`: nothing, the link of an earlier publish, a
    DuckDB database file that is no database of the user's own, or a damaged one named `*.duckdb`; never
    another file a user named."""
    target = Path(target).absolute()
    if _is_publish_link(target) or not target.exists():
        return True
    return (target.suffix == ".duckdb" or is_duckdb_file(target)) and not holds_other_data(target)


def holds_other_data(path: Path) -> bool:
    """Whether `path` is a DuckDB database that opens and holds tables or views, none of them the mart every
    publish holds: a database of the user's own (`--warehouse ~/analytics.duckdb`), not a warehouse. One
    that does not open (damaged, or held by a writer) is not known to be."""
    if not is_duckdb_file(path):
        return False
    try:
        con = duckdb.connect(str(path), read_only=True)
    except duckdb.Error:
        return False
    try:
        names = {name for (name,) in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    finally:
        con.close()
    return bool(names) and WAREHOUSE_MART not in names


def _is_publish_link(path: Path) -> bool:
    """Whether `path` is the link a publish points at its file, `<name>.publishes/<publish>/<name>`."""
    if not path.is_symlink():  # nor the root, which has no name to add to
        return False
    return (path.parent / os.readlink(path)).parent.parent == path.with_name(path.name + PUBLISHES)


LINKS_FOLLOWED = 40  # as many as Linux follows in one path


def _publish_link(path: Path) -> Path:
    """The warehouse's own link, through the links a user made to it (`ln -s data/warehouse.duckdb w.duckdb`):
    its folder is the one the views name the runs' files from. `path` itself when no link leads to one."""
    link = path
    for _ in range(LINKS_FOLLOWED):
        if _is_publish_link(link) or not link.is_symlink():
            break
        link = Path(os.path.normpath(link.parent / os.readlink(link)))
    return link if _is_publish_link(link) else path


def _cannot_open(path: Path, error: duckdb.Error, more_memory: str) -> BaccaratError | WorldFailure:
    """A file there that a publish may not replace is bad input, and publishing over it is not offered;
    a warehouse that DuckDB cannot read, or another process holds for writing, is a failure of the world;
    one line saying what to do."""
    reason = str(error).strip().splitlines()[0]
    if not may_be_replaced(path):
        return BaccaratError(f"{path} is not a warehouse: it is not a DuckDB database file (give the path of "
                             f"the warehouse `baccarat marts` published)")
    if reason.startswith("Out of Memory"):
        return BaccaratError(f"warehouse {path} cannot be opened within the memory limit ({reason}): give it "
                             f"more with {more_memory}")
    if re.search(r"\block", reason.lower()):  # not the "block" of other errors
        hint = f"another process holds it open for writing: end that process, or {_publish_again(path)}"
    elif "different configuration" in reason:  # DuckDB opens a file once per process, with one configuration
        hint = ("this process has it open in another connection with other bounds (threads, memory_limit, "
                "max_temp_directory_size) or settings: give every connection of the process the same bounds")
    else:
        hint = f"it is damaged or not a warehouse: {_publish_again(path)}"
    return WorldFailure(f"warehouse {path} cannot be opened ({reason}); {hint}")


def _confine(con: duckdb.DuckDBPyConnection, stable: Path, more_memory: str) -> None:
    """Views name their files relative to the warehouse's folder, which DuckDB searches for them. The
    database of a connection this process has open to the file already is confined already (the
    connections of one process share it: Bounds.config)."""
    base = stable.parent
    try:
        views = con.execute("SELECT view_name, sql FROM duckdb_views() WHERE NOT internal").fetchall()
        named = {(view, match.replace("''", "'")) for view, sql in views for match in _QUOTED_PARQUET.findall(sql)}
        _refuse_missing_files(stable, named)
        if con.execute("SELECT current_setting('lock_configuration')").fetchone()[0]:
            return
        con.execute(f"SET GLOBAL file_search_path = {sql_string(str(base))}")
        files = sorted({name for _, name in named} | {os.path.normpath(base / name) for _, name in named})
        # DuckDB takes the allowed paths only once the database runs, and only while external access is on
        con.execute(f"SET allowed_paths = {sql_list(files)}")
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
    except duckdb.Error as error:
        raise _cannot_open(stable, error, more_memory) from None


def _refuse_missing_files(stable: Path, named: set[tuple[str, str]]) -> None:
    """One line naming the run and the file of the first view whose file is gone, and what to run: a damaged
    run (a file of its rounds gone) is refused by `baccarat marts` until repaired, as verify says."""
    for view, name in sorted(named):
        file = os.path.normpath(stable.parent / name)
        if not Path(file).is_file():
            found = _RUN_FILE.fullmatch(file)
            out, run = found.groups() if found else (stable.parent, "?")
            if not Path(file).parent.parent.is_dir():  # no table there at all, not one run's file gone
                raise WorldFailure(f"the warehouse {stable}: view {view} reads the runs' files beside it, and there "
                                   f"is no {Path(file).parent.parent}: a warehouse copied or moved away from its "
                                   "data folder cannot read them; open it where `baccarat marts` published it, or "
                                   f"publish one here (baccarat marts --out DATA --warehouse {stable})")
            raise WorldFailure(f"the warehouse {stable}: view {view} reads run {run!r}, whose file {file} is gone: "
                                f"`baccarat verify --out {shlex.quote(str(out))}` names the repair if the run is "
                                f"damaged; then publish the warehouse again (baccarat marts --out "
                                f"{shlex.quote(str(out))} --warehouse {shlex.quote(str(stable))})")


_DATA_FAILURES = ("IO Error:", "Invalid Error:", "Serialization Error:")  # reading, decoding a file
_DAMAGED_PARQUET = ("No magic bytes found", "too small to be a Parquet file", "Corrupt")  # DuckDB's Parquet reader


def failed_on_the_data(error: duckdb.Error) -> bool:
    """Whether a query failed on a data file under the views (gone, unreadable, damaged: DuckDB's I/O,
    decoding and Parquet reader errors), not on its own SQL."""
    message = str(error).strip()
    return (isinstance(error, duckdb.IOException) or message.startswith(_DATA_FAILURES)
            or (message.startswith("Invalid Input Error:") and any(words in message for words in _DAMAGED_PARQUET))
            or (type(error) is duckdb.Error and " Error: " not in message.partition("\n")[0]))


def damaged_file_hint(error: duckdb.Error) -> str | None:
    """What to run when a query failed on a run's data file the message names (truncated, damaged): verify
    names the run's repair. None when it names no file of a run."""
    for quoted in _QUOTED_PARQUET.findall(str(error)):
        if found := _RUN_FILE.fullmatch(os.path.normpath(quoted.replace("''", "'"))):
            out, run = found.groups()
            return f"run {run!r} has a damaged file: `baccarat verify --out {shlex.quote(out)}` names its repair"
    return None


# A sentence of DuckDB's advising a setting (`Use "SET max_expression_depth TO x" to increase ...`), which the
# readers' confinement refuses
_SET_ADVICE = re.compile(r'[^.]*"SET [^"]*"[^.]*\.')
_TAKES_NO_SET = "(a reader of the warehouse takes no SET)"


def error_with_hint(error: duckdb.Error) -> str:
    """DuckDB's first line, and its hint ("Did you mean ...", "Candidate bindings: ...") on the same line; advice
    to SET a setting, which a reader cannot follow, said so."""
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    hints = [line for line in lines[1:] if line.startswith(("Did you mean", "Candidate bindings"))]
    return _SET_ADVICE.sub(" " + _TAKES_NO_SET, " ".join(lines[:1] + hints), count=1)
