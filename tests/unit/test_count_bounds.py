"""Count systems' numbers have bounds: an unbounded tag was a traceback in every later `baccarat marts`."""

import numpy as np
import pytest
import yaml

from pipeline.cards import CARDS_PER_DECK, MAX_DECKS
from pipeline.composition.counts import load_count_system
from pipeline.errors import BaccaratError

UNBALANCED = {
    "name": "mine", "source": "a test", "tags": {"A": 1, 2: 1, 3: 1, 4: 2, 5: -1, 6: -2, 7: -1, 8: -1, 9: 0, "T": 0},
    "balanced": False, "initial_running_count": 0, "true_count": "per_deck_unseen",
    "bets": {"banker": {"favourable_when": "high"}},
}


def _count_file(tmp_path, changes: dict) -> str:
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump(UNBALANCED | changes, sort_keys=False))
    return str(path)


@pytest.mark.parametrize(("changes", "message"), [
    ({"tags": {**UNBALANCED["tags"], 4: 10**20}}, "tags.4: Input should be less than or equal to 10"),
    ({"tags": {**UNBALANCED["tags"], "T": -11}}, "tags.T: Input should be greater than or equal to -10"),
    ({"initial_running_count": 1e20}, "initial_running_count: Input should be less than or equal to 4160"),
])
def test_a_count_tag_too_large_for_the_marts_was_a_traceback_in_every_later_marts(tmp_path, changes, message):
    """A tag of 1e20 loaded, `baccarat composition` committed its counts, and from then on `baccarat marts`
    stopped on DuckDB casting floor(2 x true count) to BIGINT, a traceback (and short of that, the
    count_efficiency mart's trigger grid spans every half-count between the extremes)."""
    with pytest.raises(BaccaratError) as refused:
        load_count_system(_count_file(tmp_path, changes))
    assert message in str(refused.value) and "\n" not in str(refused.value)


def test_the_largest_count_allowed_keeps_the_trigger_grid_small(tmp_path):
    largest = load_count_system(_count_file(tmp_path, {"tags": {label: 10 for label in UNBALANCED["tags"]},
                                                       "initial_running_count": 4160}))
    one_card_unseen = np.zeros((1, CARDS_PER_DECK), dtype=np.int16)
    one_card_unseen[0, 0] = 1
    running = largest.running_counts(one_card_unseen, MAX_DECKS)
    true_count = largest.true_counts(running, one_card_unseen.sum(axis=1))
    assert running.tolist() == [4160 + 10 * (MAX_DECKS * CARDS_PER_DECK - 1)]
    assert 2 * abs(true_count[0]) < 10**6  # half-count levels of the trigger grid, far inside BIGINT
