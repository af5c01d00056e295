"""The marts as partials and finals. Each engine computes, over one range of whole shoes, small keyed
tables of that range's rounds and shoes (the partials); merged, they are what the engine computes over
every round at once, and the engine's final queries turn them into the marts. One process is one range;
Spark runs many ranges as tasks (pipeline/marts/cluster.py). On an object store a range's files are
fetched whole into a local folder first, each with one request and checked there against the SHA-256 its
runs row records, so that the engines read local files and no object's bytes cross the network twice
(local_range). docs/marts-and-roads.md, "On a cluster"."""

import contextlib
import shlex
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from functools import partial

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs

from pipeline.at_once import each_at_once
from pipeline.cores import usable_cores
from pipeline.marts.inputs import RunInput
from pipeline.marts.publish import PER_SHOE_MARTS, WrittenMart
from pipeline.repair import ROUND_EV, added_repair
from pipeline.runs import FileEntry, contract_problem, repair_command
from pipeline.storage import StorageError, first_line, parquet_footer
from pipeline.tasks import part_shoes, shoe_ranges

# How each partial merges across ranges: its merged columns (a name, or a prefix ending in "_" for every
# column starting with it) and how (a pyarrow aggregation); the others are its key (none: one row). A
# partial with none merged has each key in one range. Every partial's rows are bounded by the run's
# distinct values (nets, streak lengths, checkpoints, road column lengths), never by its shoes, but for
# the file entries and the road outcomes of the shoes road_cells draws.
MERGED = {
    "outcome_totals": {"rounds": "sum", "shoes": "sum", "banker_wins": "sum", "player_wins": "sum", "ties": "sum"},
    "longest_counts": {"shoes": "sum"},  # shoes per side and longest streak
    "sessions": {"sessions": "sum"},  # shoes and the 100- and 1,000-round sessions wholly inside a range
    "session_edges": {"rounds": "sum", "net_": "sum"},  # blocks across a range's edges, by size and block
    "running_nets": {"rounds": "sum", "net_": "sum"},  # nets before each checkpoint of 100 rounds or more
    "round_groups": {"weight": "sum"},  # streak indexes end with their shoe
    "opening": {},  # the run's first 100 rounds, by run_row
    "road_outcomes": {},  # the outcomes of the shoes road_cells draws, by shoe and round
    # over the roads of the shoes the road statistics cover: never crossing a shoe, so they merge by summing
    "road_shoes": {"shoes": "sum"},  # the shoes with a big road
    "road_marks": {"count": "sum"},  # entries per road and mark
    "road_columns": {"columns": "sum"},  # logical columns per road and length
    "road_conditions": {"observations": "sum", "next_banker": "sum"},  # entries per condition and pattern
    "shoe_summary": {},  # the file of the mart's rows each range's task wrote: path, size, rows
}
# A co-moment about its group's mean, m2_<x> (of x with itself) or m2_<x>_<y>, beside the group's count
# (the column named after CENTRED) and sum_<x>, sum_<y>: merged by Chan, Golub and LeVeque's rule, so
# that a variance or a correlation is not the small difference of two large raw sums.
CENTRED = "centred over "
# The composition marts' partials (sql/prep_ev_groups.sql, prep_perfect_bets.sql, prep_count_levels.sql).
COMPOSITION_MERGED = {
    "ev_groups": {"rounds": "sum", "sum_": "sum", "m2_": CENTRED + "rounds", "min_": "min", "positive": "sum"},
    "perfect_bets": {"shoes": "sum", "rounds": "sum", "rounds_bet": "sum", "expected": "sum", "sum_": "sum",
                     "m2_": CENTRED + "shoes"},
    "count_levels": {"rounds": "sum", "sum_": "sum", "m2_": CENTRED + "rounds", "min_": "min", "max_": "max"},
}
OPENING_ROUNDS = 100  # ev_convergence.sql: checkpoints below 100 rounds read single rounds


@dataclass(frozen=True)
class RangeFile:
    path: str  # as the query engines take it
    offset: int  # run_row of the file's first row
    whole: bool  # every shoe of the file lies in the range: no filter needed


@dataclass(frozen=True)
class ShoeRange:
    """Shoes [first, last) of a run, the rounds and shoes files holding any of them, and the threads the
    engine may use for them (None: every core of the host)."""

    first: int
    last: int
    rounds: tuple[RangeFile, ...]
    shoes: tuple[RangeFile, ...]
    threads: int | None = None
    build: str = ""  # the build's id: the files the range's task writes carry it

    def file_name(self) -> str:
        """The name of a file the range's task writes: a retried task writes the same bytes under it."""
        return f"part-{self.build}-shoes-{self.first}-{self.last}.parquet"

    def opening(self) -> tuple[RangeFile, ...]:
        """The range's rounds files that hold any of the run's first 100 rounds."""
        return tuple(file for file in self.rounds if file.offset < OPENING_ROUNDS)


def _range_files(files: list[tuple[FileEntry, str]], first: int, last: int) -> tuple[RangeFile, ...]:
    """Of a table's (entry, reader path) pairs in shoe order, the files holding any of shoes [first, last)."""
    held, offset = [], 0
    for entry, path in files:
        if entry.holds_any(first, last):
            held.append(RangeFile(path, offset, entry.first_shoe >= first and entry.last_shoe < last))
        offset += entry.rows
    return tuple(held)


def plan_ranges(run: RunInput, ranges: int, build: str = "") -> list[ShoeRange]:
    """The run's shoes in `ranges` contiguous ranges of whole shoes (fewer when the run has fewer shoes)."""
    rounds, shoes = (list(zip(run.record.files_of(table), run.files(table))) for table in ("rounds", "shoes"))
    return [ShoeRange(first, last, _range_files(rounds, first, last), _range_files(shoes, first, last), build=build)
            for first, last in shoe_ranges(run.record.shoes, ranges)]


def build_id() -> str:
    """A new build's id, unique to it: its time in milliseconds and a random part."""
    return f"{int(time.time() * 1000)}-{uuid.uuid4().hex[:8]}"


def _aggregation(merging: dict[str, str], column: str) -> str | None:
    """How `column` merges (see MERGED), or None for a key column."""
    for name, how in merging.items():
        if column == name or (name.endswith("_") and column.startswith(name)):
            return how
    return None


def merge(merging: dict[str, str], tables: list[pa.Table]) -> pa.Table:
    """One partial's tables from every range as one: concatenated, and the merged columns aggregated by key."""
    table = pa.concat_tables(tables)
    merged = {column: how for column in table.column_names if (how := _aggregation(merging, column))}
    if len(tables) == 1 or not merged:
        return table
    keys = [column for column in table.column_names if column not in merged]
    summed = [(column, "sum" if how.startswith(CENTRED) else how) for column, how in merged.items()]
    grouped = table.group_by(keys, use_threads=False).aggregate(summed).rename_columns(keys + list(merged))
    if centred := [column for column, how in merged.items() if how.startswith(CENTRED)]:
        [count] = {merged[column].removeprefix(CENTRED) for column in centred}
        grouped = _add_spread_of_means(table, grouped, keys, centred, count)
    return grouped.select(table.column_names).cast(table.schema)


def _add_spread_of_means(table: pa.Table, grouped: pa.Table, keys: list[str], centred: list[str],
                         count: str) -> pa.Table:
    """The merged co-moments: to the summed m2_<x>_<y> of the parts, add sum(n (x_i - x)(y_i - y)) over
    the parts, with n a part's `count`, x_i its mean of x (sum_<x> / n) and x the group's."""
    totals = grouped.select(keys + [count, *{f"sum_{v}" for c in centred for v in _variables(c)}])
    parts = table.join(totals.rename_columns(keys + [f"group_{c}" for c in totals.column_names[len(keys):]]), keys)
    rounds, group_rounds = (pc.cast(parts[name], pa.float64()) for name in (count, f"group_{count}"))

    def deviation(variable: str) -> pa.Array:
        return pc.subtract(pc.divide(parts[f"sum_{variable}"], rounds),
                           pc.divide(parts[f"group_sum_{variable}"], group_rounds))

    spreads = {f"spread_{c}": pc.multiply(pc.multiply(rounds, deviation(x)), deviation(y))
               for c in centred for x, y in [_variables(c)]}
    spread = pa.table({**{key: parts[key] for key in keys}, **spreads}).group_by(keys, use_threads=False)
    grouped = grouped.join(spread.aggregate([(name, "sum") for name in spreads]).rename_columns(keys + list(spreads)),
                           keys)
    for column in centred:
        grouped = grouped.set_column(grouped.schema.get_field_index(column), column,
                                     pc.add(grouped[column], grouped[f"spread_{column}"]))
    return grouped


def _variables(centred: str) -> tuple[str, str]:
    """The two variables of a co-moment column: m2_tc_ev -> (tc, ev); m2_ev -> (ev, ev)."""
    names = centred.removeprefix("m2_").split("_")
    return names[0], names[-1]


def merge_partials(results: list[dict[str, pa.Table]], merging: dict[str, dict[str, str]]) -> dict[str, pa.Table]:
    """Each partial the ranges computed (every range computes the same ones), merged."""
    return {name: merge(how, [result[name] for result in results]) for name, how in merging.items()
            if name in results[0]}


RangeRunner = Callable[[Callable[[ShoeRange], object], list[ShoeRange]], list]


def in_process(task: Callable[[ShoeRange], object], ranges: list[ShoeRange]) -> list:
    return [task(shoes) for shoes in ranges]


def on_every_core(task: Callable[[ShoeRange], object], ranges: list[ShoeRange]) -> list:
    """In this process, a range per core at a time, each range's engine on one thread, as Spark's tasks
    run them: the engines' single-threaded steps (the roads' window functions) leave no core idle."""
    return each_at_once(task, [replace(shoes, threads=1) for shoes in ranges], threads=usable_cores())


# From an object store, a range's files are fetched while the range before it is built: one range fetches
# and one builds at a time (local_range and the tasks below hold these), so the engine keeps every core.
_FETCHING, _BUILDING = threading.Lock(), threading.Lock()


def two_at_once(task: Callable[[ShoeRange], object], ranges: list[ShoeRange]) -> list:
    """In this process, two ranges at a time: on an object store one range's fetch overlaps the build of
    the range before it."""
    return each_at_once(task, ranges, threads=2)


def _holds_range(path: str, shoes: ShoeRange) -> bool:
    """Whether a file another job added to the run may hold shoes of the range (by its name)."""
    held = part_shoes(path)
    return held is None or (held[0] < shoes.last and held[1] > shoes.first)


def _moved(files: tuple[RangeFile, ...], copies: dict[str, tuple[str, str]]) -> tuple[RangeFile, ...]:
    return tuple(replace(file, path=copies[file.path][0]) for file in files)


@contextlib.contextmanager
def local_range(run: RunInput, shoes: ShoeRange, round_ev: tuple[str, ...] = ()) \
        -> Iterator[tuple[ShoeRange, tuple[str, ...]]]:
    """The range and the run's round_ev files (reader paths) as the range's task reads them: unchanged on
    a local OUT (each rounds and shoes file checked first when run.tasks_hash); else copies of the range's
    files in a local folder (its rounds and shoes files and the round_ev files holding its shoes), each
    copy checked against the SHA-256 its runs row or its commit recorded (an OSError naming the file and
    the repair). What the task writes still goes to the run's store."""
    recorded = {run.out.reader_path(entry.path): entry for entry in run.record.files}
    if run.out.is_local:
        for file in shoes.rounds + shoes.shoes if run.tasks_hash else ():
            entry = recorded[file.path]
            try:
                digest = run.out.sha256(entry.path)
            except StorageError as error:  # only an OSError ends a task's run in one line (tasks.collect_or_fail)
                raise OSError(str(error)) from None
            _check_digest(run, file.path, digest, entry.sha256)
        yield shoes, round_ev
        return
    # a range no round_ev file holds still reads one, whose columns its empty relation takes
    round_ev = tuple(path for path in round_ev if _holds_range(path, shoes)) or round_ev[:1]
    wanted = list(dict.fromkeys([file.path for file in shoes.rounds + shoes.shoes] + list(round_ev)))
    added = run.added.get(ROUND_EV, {})
    with contextlib.ExitStack() as fetched:
        with _FETCHING:
            try:
                copies = fetched.enter_context(run.out.local_copies(wanted))
            except FileNotFoundError as error:
                raise OSError(f"run {run.run_id!r}: data file missing: {error.filename}; "
                              f"repair: {_repair_of(run, error.filename)}") from None
        for path, (_, digest) in copies.items():
            expected = recorded[path].sha256 if path in recorded else added.get(path)  # None: committed without
            _check_digest(run, path, digest, expected)
        for file in shoes.rounds + shoes.shoes:  # load_run opens no object of a store: its task checks it here
            _check_contract(run, recorded[file.path], file.path, copies[file.path][0])
        local = replace(shoes, rounds=_moved(shoes.rounds, copies), shoes=_moved(shoes.shoes, copies))
        yield local, tuple(copies[path][0] for path in round_ev)


def _repair_of(run: RunInput, path: str) -> str:
    """The command that repairs the run's file at reader path `path`."""
    if path in run.added.get(ROUND_EV, {}):
        return added_repair(run.out, ROUND_EV, run.run_id)
    return repair_command(run.out, run.record)


def _check_digest(run: RunInput, path: str, digest: str | None, expected: str | None) -> None:
    """An OSError naming the run's file at reader path `path` and the repair, unless its SHA-256 `digest`
    is the one its runs row or its commit recorded, `expected` (None: none recorded)."""
    if expected is not None and digest != expected:
        raise OSError(f"run {run.run_id!r}: data file fails its checksum: {path}; repair: {_repair_of(run, path)}")


def _check_contract(run: RunInput, entry: FileEntry, path: str, copy: str) -> None:
    """An OSError naming the run's file at reader path `path` and the repair, unless its local `copy`
    follows the contract of its table and holds the rows its runs row records."""
    footer = parquet_footer(copy, pafs.LocalFileSystem())
    if why := contract_problem(path, footer, entry.table, run.record.bets, run.record.strategies is not None,
                               entry.rows):
        raise OSError(f"run {run.run_id!r}: {why}; repair: {_repair_of(run, path)}")


@dataclass(frozen=True)
class Family:
    """Marts as one engine builds them by ranges: a range's partials (of(shoes, round_ev), given the range
    and the run's round_ev files as the range's task reads them), how each partial merges (as MERGED
    says), and the marts from the merged partials (finals(merged))."""

    of: Callable[[ShoeRange, tuple[str, ...]], dict[str, pa.Table]]
    merging: dict[str, dict[str, str]]
    finals: Callable[[dict[str, pa.Table]], dict[str, pa.Table | WrittenMart]]


def marts_family(partials_of: Callable, finals: Callable, run: RunInput, road_cells_shoes: int,
                 road_stats_shoes: int) -> Family:
    """A run's marts from an engine's partials_of(run, shoes, road_cells_shoes, road_stats_shoes) and
    finals(run, merged); the marts the range tasks wrote (PER_SHOE_MARTS) as their files."""
    return Family(partial(_marts_partials, partials_of, run, road_cells_shoes, road_stats_shoes), MERGED,
                  partial(_marts_finals, finals, run))


def _marts_partials(partials_of: Callable, run: RunInput, road_cells_shoes: int, road_stats_shoes: int,
                    shoes: ShoeRange, round_ev: tuple[str, ...]) -> dict[str, pa.Table]:
    return partials_of(run, shoes, road_cells_shoes, road_stats_shoes)


def _marts_finals(finals: Callable, run: RunInput, merged: dict[str, pa.Table]) -> dict[str, pa.Table | WrittenMart]:
    written = {name: WrittenMart(tuple(merged.pop(name).to_pylist())) for name in PER_SHOE_MARTS}
    return finals(run, merged | run.counted_partials) | written


def composition_family(partials_of: Callable, finals: Callable, run: RunInput) -> Family:
    """A run's composition marts from an engine's partials_of(run, shoes, round_ev) and finals(merged)."""
    return Family(partial(partials_of, run), COMPOSITION_MERGED, finals)


def _partials_of_range(families: tuple[Family, ...], run: RunInput, round_ev: tuple[str, ...],
                       shoes: ShoeRange) -> list[dict[str, pa.Table]]:
    building = contextlib.nullcontext() if run.out.is_local else _BUILDING
    with local_range(run, shoes, round_ev) as (shoes_here, round_ev_here), building, reading_run_files(run):
        return [family.of(shoes_here, round_ev_here) for family in families]


# How DuckDB reports an exception that Python code it called raised (a registered table's schema, row count
# or stream: "... failed: TYPE: MESSAGE"); a Ctrl-C arriving then is a KeyboardInterrupt there.
_CTRL_C_IN_PYTHON_CALLED = " failed: KeyboardInterrupt:"


@contextlib.contextmanager
def reading_run_files(run: RunInput) -> Iterator[None]:
    """An engine failing on the run's files (damaged past what load_run checks, or since) as an OSError
    naming the run and `baccarat verify`: one line, from this process and from a Spark task alike
    (tasks.collect_or_fail). A Ctrl-C that DuckDB reports as another error is a KeyboardInterrupt again."""
    import duckdb
    import polars as pl

    try:
        yield
    # pyo3's PanicException (a Rust panic in Polars) derives from BaseException alone
    except (duckdb.Error, pl.exceptions.PolarsError, pl.exceptions.PanicException, pa.ArrowException) as error:
        if isinstance(error, duckdb.InterruptException):
            raise
        if _CTRL_C_IN_PYTHON_CALLED in str(error):
            raise KeyboardInterrupt from None
        verify = shlex.join(["baccarat", "verify", "--run-id", run.run_id, "--out", run.out.uri])
        raise OSError(f"run {run.run_id!r}: its marts cannot be built from its files ({first_line(error)}): "
                      f"check them with `{verify}`") from None


def build_by_ranges(run: RunInput, families: list[Family], round_ev: list[str] = (), ranges: int = 1,
                    run_ranges: RangeRunner = in_process) -> dict[str, pa.Table | WrittenMart]:
    """The marts of each family of a run over `ranges` shoe ranges run by run_ranges: one task per range
    computes every family's partials from one read of the range's files (and of the run's round_ev
    files, `round_ev`), and each family's partials merge here into its marts."""
    task = partial(_partials_of_range, tuple(families), run, tuple(round_ev))
    results = run_ranges(task, plan_ranges(run, ranges, build_id()))
    marts = {}
    for index, family in enumerate(families):
        marts |= family.finals(merge_partials([result[index] for result in results], family.merging))
    return marts
