"""Sessions rows as the backtest job writes them (schemas/sessions.yaml), played without the job by
pipeline/play.py's play_session: for the tests of the system marts, in both tiers."""

from decimal import Decimal
from itertools import islice

import polars as pl
import pyarrow as pa

from pipeline.play import Round, play_session
from pipeline.schemas import contract
from pipeline.systems import load_system

CHECKPOINTS = (10, 25, 50, 100, 250, 500, 1000)


def rounds_of(rounds: pl.DataFrame, kinds: tuple[str, ...] = ("banker", "player", "tie")) -> list[Round]:
    """A run's rounds (shoe_id, outcome, net_<kind>), in order, as play_session takes them."""
    return [Round(row["shoe_id"], row["outcome"], {kind: row[f"net_{kind}"] for kind in kinds})
            for row in rounds.iter_rows(named=True)]


def played_sessions(names: list[str], rounds: list[Round], sessions: int, max_rounds: int = 30,
                    checkpoints: bool = True) -> pa.Table:
    """Up to `sessions` consecutive sessions of each named shipped system (each on one bet kind, so the
    wagered split is known) from the first of `rounds`; a checkpoint is the end bankroll of the session
    played over that many rounds only (null throughout without `checkpoints`, for tests of the marts that
    do not read them, at a seventh of the time). Sessions are placed by their index in `rounds` (shoe 0,
    round i+1)."""
    rows = []
    for name in names:
        system, start = load_system(name).with_session(max_rounds=max_rounds), 0
        for _ in range(sessions):
            if start >= len(rounds):
                break
            earlier = rounds[:start]
            result = play_session(system, islice(rounds, start, None), earlier)
            after = [play_session(system, rounds[start:start + n], earlier).end
                     if checkpoints and result.ended != "incomplete" else None for n in CHECKPOINTS]
            rows.append({"system": name, "first_shoe": 0, "first_round": start + 1, "start_bankroll": result.start,
                         "end_bankroll": result.end, "net": result.net, "wagered": result.wagered,
                         "wagered_banker": result.wagered if system.bet == "banker" else Decimal(0),
                         "wagered_player": result.wagered if system.bet == "player" else Decimal(0),
                         "rounds": result.rounds, "stakes": result.stakes, "max_drawdown": result.max_drawdown,
                         "ended": result.ended, "table_max_hits": result.table_max_hits,
                         **{f"bankroll_after_{n}": value for n, value in zip(CHECKPOINTS, after)}})
            start += result.rounds
    return pa.Table.from_pylist(rows, schema=contract("sessions").arrow(()))
