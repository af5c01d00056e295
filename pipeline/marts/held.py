"""Which runs the marts hold. `baccarat marts` commits a run's marts (MARTS) together, so a run that some
of their tables hold and another does not lost its rows there: a table's log or folder removed by hand.
Every such table is the next `marts` without --run-id's to build again: one with --run-id builds that run
alone there, and the others stay lost."""

from pipeline.at_once import each_at_once
from pipeline.marts.inputs import MARTS
from pipeline.schemas import contract
from pipeline.storage import StorageError, Store


def runs_in_marts(out: Store) -> dict[str, set[str]]:
    """The runs each mart of MARTS holds, by mart, their tables read side by side (on an object store a
    request for each commit since a table's checkpoint); a table whose log cannot be read is left out
    (verify names it on a line of its own)."""
    held = each_at_once(lambda name: _run_ids(out, contract(name).table), MARTS)
    return {name: runs for name, runs in zip(MARTS, held) if runs is not None}


def _run_ids(out: Store, table: str) -> set[str] | None:
    try:
        return out.run_ids(table)
    except StorageError:
        return None


def lost_mart_rows(out: Store, run_ids: list[str] | None = None) -> list[str]:
    """A line for each mart that holds none of the rows of runs the other marts hold (of `run_ids` alone
    when given), with the command that builds them again."""
    held = runs_in_marts(out)
    some = set().union(*held.values())
    if run_ids:
        some &= set(run_ids)
    lines = []
    for name, runs in held.items():
        if lost := sorted(some - runs):
            runs_named = "1 run" if len(lost) == 1 else f"{len(lost):,} runs"
            lines.append(f"table {out.location(contract(name).table)} holds no rows of {runs_named} the other marts "
                         f"hold, such as {lost[0]!r} (its log or its folder removed?); repair: "
                         f"baccarat marts --out {out.uri}")
    return lines
