"""Which runs the marts hold. `baccarat marts` commits a run's marts together, so a run that some of their
tables hold and another that always holds it with them (HELD_WITH) does not lost its rows there: a table's
log or folder removed by hand.
Every such table is the next `marts` without --run-id's to build again: one with --run-id builds that run
alone there, and the others stay lost. The marts built from rows another job adds to a run wait for the
next `marts` after that job."""

import shlex

from pipeline.at_once import each_at_once
from pipeline.marts.inputs import BUILT_FROM_ADDED, EVERY_MART, MARTS
from pipeline.schemas import contract
from pipeline.storage import StorageError, Store

# The marts whose runs a mart holds too (built together from the same rows): each of MARTS has rows of every
# run. Of those built from round_ev and sessions, some have none of a run another has: count_efficiency
# without a count system, and the system marts over complete sessions alone (drawdowns, of a system whose
# unit is known, too), which system_outcomes holds with its incomplete ones.
HELD_WITH = {
    **{name: tuple(other for other in MARTS if other != name) for name in MARTS},
    "advantage_by_depth": ("perfect_play", "count_efficiency"),
    "perfect_play": ("advantage_by_depth", "count_efficiency"),
    "system_outcomes": ("system_edge", "bankroll_paths", "drawdowns"),
    "system_edge": ("bankroll_paths", "drawdowns"),
    "bankroll_paths": ("system_edge", "drawdowns"),
}


def runs_in_every_mart(out: Store) -> dict[str, set[str] | None]:
    """The runs each mart holds, by mart (None: its log cannot be read)."""
    return dict(zip(EVERY_MART, _runs_in_tables(out, [contract(name).table for name in EVERY_MART])))


def runs_with_added_rows(out: Store) -> dict[str, set[str] | None]:
    """The runs each table another job adds (round_ev, sessions) holds, by table (None: its log cannot be read)."""
    return dict(zip(BUILT_FROM_ADDED, _runs_in_tables(out, list(BUILT_FROM_ADDED))))


def added_marts_to_build(added: dict[str, set[str] | None],
                         held: dict[str, set[str] | None]) -> dict[str, dict[str, tuple[str, ...]]]:
    """The runs that have rows in a table another job adds (`added`: runs_with_added_rows) but in none of the
    marts built from it (`held`: runs_in_every_mart), with those tables and marts: that job committed after
    the run's marts were built (again, it removed the marts built from the rows it replaced), and `baccarat
    marts --run-id` builds them. A run that some of those marts hold is not named: one may have no rows of it
    (a system's drawdowns over no complete session)."""
    missing = {}
    for table, names in BUILT_FROM_ADDED.items():
        for run_id in (added[table] or set()) - set().union(*(held[name] or set() for name in names)):
            missing.setdefault(run_id, {})[table] = names
    return missing


def _runs_in_tables(out: Store, tables: list[str]) -> list[set[str] | None]:
    """The runs each table holds (None: its log cannot be read), the tables read side by side (on an object
    store a request for each commit since a table's checkpoint)."""
    return each_at_once(lambda table: _run_ids(out, table), tables)


def _run_ids(out: Store, table: str) -> set[str] | None:
    try:
        return out.run_ids(table)
    except StorageError:
        return None


def lost_runs(out: Store, run_ids: list[str] | None = None,
              held: dict[str, set[str] | None] | None = None) -> dict[str, list[str]]:
    """The runs each mart lost (of `run_ids` alone when given): those the marts it is held with (HELD_WITH)
    hold and it does not, by mart (a mart whose log cannot be read left out: verify names it on its own);
    `held`: runs_in_every_mart's answer, when read already."""
    held = runs_in_every_mart(out) if held is None else held
    lost = {}
    for name, companions in HELD_WITH.items():
        if held[name] is None:
            continue
        runs = set().union(*(held[other] or set() for other in companions)) - held[name]
        if missing := sorted(runs & set(run_ids) if run_ids else runs):
            lost[name] = missing
    return lost


def lost_mart_rows(out: Store, run_ids: list[str] | None = None) -> list[str]:
    """A line for each mart that holds none of the rows of runs the other marts hold (of `run_ids` alone
    when given), with the command that builds them again."""
    lines = []
    for name, lost in lost_runs(out, run_ids).items():
        runs_named = "1 run" if len(lost) == 1 else f"{len(lost):,} runs"
        lines.append(f"table {out.location(contract(name).table)} holds no rows of {runs_named} the other marts "
                     f"hold, such as {lost[0]!r} (a build killed between its commits, or its log or folder "
                     f"removed?); repair: baccarat marts --out {shlex.quote(out.uri)}")
    return lines
