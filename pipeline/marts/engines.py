"""The two query engines behind one interface: every mart of a run, and the roads of outcome strings."""

import pyarrow as pa

from pipeline.errors import BaccaratError
from pipeline.marts.choices import Engine
from pipeline.marts.inputs import RunInput
from pipeline.marts.partials import RangeRunner, build_by_ranges, in_process, reading_run_files
from pipeline.marts.publish import WrittenMart


MAX_ROUNDS = 32_767  # rounds of one sequence: `round` is an int16, as in the rounds contract


def build_marts(engine: Engine, run: RunInput, road_cells_shoes: int, road_stats_shoes: int, ranges: int = 1,
                run_ranges: RangeRunner = in_process) -> dict[str, pa.Table | WrittenMart]:
    """Every mart of one run, from the partials of `ranges` ranges of its shoes run by run_ranges
    (pipeline/marts/partials.py), shoe_summary as the files the ranges wrote; with its composition marts
    (from the same tasks, which read each file of a range once) when it has round_ev rows, and its
    system marts (in one process) when it has sessions rows. An engine that fails on the run's files is
    one line naming the run and `baccarat verify` (partials.reading_run_files)."""
    with reading_run_files(run):
        return _build_marts(engine, run, road_cells_shoes, road_stats_shoes, ranges, run_ranges)


def _build_marts(engine: Engine, run: RunInput, road_cells_shoes: int, road_stats_shoes: int, ranges: int,
                 run_ranges: RangeRunner) -> dict[str, pa.Table | WrittenMart]:
    if engine is Engine.duckdb:
        from pipeline.marts import composition_duckdb as composition, marts_duckdb as marts
    else:
        from pipeline.marts import composition_polars as composition, marts_polars as marts
    families = [marts.family(run, road_cells_shoes, road_stats_shoes)]
    if round_ev := run.added_files("round_ev"):
        families.append(composition.family(run))
    return build_by_ranges(run, families, round_ev, ranges, run_ranges) | build_system_marts(engine, run)


def build_system_marts(engine: Engine, run: RunInput) -> dict[str, pa.Table]:
    """The betting-system marts of a run from its sessions rows; none for a run without them."""
    from pipeline.marts import systems_duckdb, systems_polars

    sessions = run.added_files("sessions")
    chosen = systems_duckdb if engine is Engine.duckdb else systems_polars
    return chosen.build_system_marts(run, sessions) if sessions else {}


def outcomes_table(sequences: list[str]) -> pa.Table:
    """Outcome strings as rounds of shoes 0, 1, ...; refuses letters other than B, P and T."""
    shoe_ids, rounds, outcomes = [], [], []
    for shoe_id, sequence in enumerate(sequences):
        if len(sequence) > MAX_ROUNDS:
            raise BaccaratError(f"a sequence may hold at most {MAX_ROUNDS:,} results (a round number is int16); "
                                f"got {len(sequence):,}")
        if bad := sorted(set(sequence) - set("BPT")):
            raise BaccaratError(f"outcomes may hold only B, P and T, found {''.join(bad)!r} in {sequence[:40]!r}")
        shoe_ids += [shoe_id] * len(sequence)
        rounds += range(1, len(sequence) + 1)
        outcomes += list(sequence)
    return pa.table({"shoe_id": pa.array(shoe_ids, pa.int64()), "round": pa.array(rounds, pa.int16()),
                     "outcome": pa.array(outcomes, pa.string())})


def road_cells(engine: Engine, outcomes: pa.Table) -> pa.Table:
    if engine is Engine.duckdb:
        import duckdb

        from pipeline.marts.roads_duckdb import build_roads, road_cells as cells

        con = duckdb.connect()
        con.execute("SET enable_progress_bar = false")  # stderr carries errors only
        con.register("outcomes", outcomes)
        build_roads(con)
        return cells(con)
    import polars as pl

    from pipeline.marts.roads_polars import road_cells as cells

    return cells(pl.from_arrow(outcomes))
