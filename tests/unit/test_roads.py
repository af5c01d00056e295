"""The roads of short sequences, computed by hand from the rules in docs/rules.md, through both
engines and the `baccarat roads` command."""

import json

import pytest

from pipeline.marts.board import roads_document
from pipeline.marts.engines import Engine, outcomes_table, road_cells

ENGINES = list(Engine)


def roads(sequence: str, engine: Engine) -> dict:
    return roads_document(road_cells(engine, outcomes_table([sequence])))


def big_road_cells(document: dict) -> list[tuple]:
    return [(e["outcome"], e["col"], e["row"], e["ties"]) for e in document["big_road"]]


@pytest.mark.parametrize("engine", ENGINES)
def test_ties_before_the_first_result_go_on_the_first_entry(engine):
    document = roads("TTBPPB", engine)
    assert big_road_cells(document) == [("B", 0, 0, 2), ("P", 1, 0, 0), ("P", 1, 1, 0), ("B", 2, 0, 0)]
    assert [b["outcome"] for b in document["bead_plate"]] == list("TTBPPB")


@pytest.mark.parametrize("engine", ENGINES)
def test_ties_inside_a_streak_mark_the_entry_before_them(engine):
    document = roads("BTBTTBP", engine)
    assert big_road_cells(document) == [("B", 0, 0, 1), ("B", 0, 1, 2), ("B", 0, 2, 0), ("P", 1, 0, 0)]


@pytest.mark.parametrize("engine", ENGINES)
def test_bead_plate_fills_columns_of_six_top_to_bottom(engine):
    document = roads("BPTBPTBP", engine)
    assert [(b["col"], b["row"]) for b in document["bead_plate"]] == [(0, r) for r in range(6)] + [(1, 0), (1, 1)]


@pytest.mark.parametrize("engine", ENGINES)
def test_dragon_tail_turns_right_and_blocks_the_next_column(engine):
    # Eight Banker wins: six down, then the tail turns right on the bottom row. The six Player
    # wins that follow start one column right, stop above the tail, and turn right on row 4.
    document = roads("BBBBBBBB" + "PPPPPP" + "B", engine)
    cells = [(e["draw_col"], e["draw_row"]) for e in document["big_road"]]
    assert cells == [(0, 0), (0, 1), (0, 2), (0, 3), (0, 4), (0, 5), (1, 5), (2, 5),
                     (1, 0), (1, 1), (1, 2), (1, 3), (1, 4), (2, 4),
                     (2, 0)]
    assert [e["row"] for e in document["big_road"]][:8] == list(range(8))  # logical rows are not capped


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("sequence", "big_eye_boy", "small_road", "cockroach_pig"), [
    # Big eye boy starts at column 2 row 2 (1-based): column 1 has no row 2 but a row 1 -> blue.
    ("BPP", ["blue"], [], []),
    # Else at column 3 row 1: columns 2 and 1 have equal lengths -> red.
    ("BPB", ["red"], [], []),
    # Small road starts at column 3 row 2 (compares column 1) ...
    ("BPBB", ["red", "blue"], ["blue"], []),
    # ... else at column 4 row 1 (columns 3 and 1 equal).
    ("BPBP", ["red", "red"], ["red"], []),
    # Cockroach pig starts at column 4 row 2 (compares column 1) ...
    ("BPBPP", ["red", "red", "blue"], ["red", "blue"], ["blue"]),
    # ... else at column 5 row 1 (columns 4 and 1 equal).
    ("BPBPB", ["red", "red", "red"], ["red", "red"], ["red"]),
    # Ties take no part: the same marks as BPP.
    ("TBTPTP", ["blue"], [], []),
])
def test_first_marks_of_the_derived_roads(engine, sequence, big_eye_boy, small_road, cockroach_pig):
    document = roads(sequence, engine)
    assert (document["big_eye_boy"], document["small_road"], document["cockroach_pig"]) == (
        big_eye_boy, small_road, cockroach_pig)


@pytest.mark.parametrize("engine", ENGINES)
def test_derived_marks_row_rules(engine):
    # Big road columns: B (1), PPPP (4), BB (2). Big eye boy from column 2 row 2 on:
    # P row1: column 1 has no row 1, has row 0 -> blue; P row 2: neither row 2 nor row 1 -> red;
    # P row 3: red; B row 0: lengths 4 vs 1 -> blue; B row 1: column 2 has row 1 -> red.
    assert roads("BPPPPBB", engine)["big_eye_boy"] == ["blue", "red", "red", "blue", "red"]


def test_cli_json_has_the_documented_shape(cli):
    status, out, _ = cli("roads", "--outcomes", "TBPPB", "--json")
    document = json.loads(out)
    assert status == 0
    assert set(document) == {"bead_plate", "big_road", "big_eye_boy", "small_road", "cockroach_pig"}
    assert set(document["bead_plate"][0]) == {"outcome", "col", "row"}
    assert set(document["big_road"][0]) == {"outcome", "col", "row", "ties", "draw_col", "draw_row"}


def test_cli_reads_json_lines_and_keeps_ids(cli, tmp_path):
    lines = tmp_path / "shoes.jsonl"
    lines.write_text('{"id": "a", "outcomes": "BPP"}\n\n{"id": 7, "outcomes": "BPB"}\n')
    status, out, _ = cli("roads", "--input", lines, "--engine", "polars")
    records = [json.loads(line) for line in out.splitlines()]
    assert status == 0 and [r["id"] for r in records] == ["a", 7]
    assert [r["big_eye_boy"] for r in records] == [["blue"], ["red"]]


def test_cli_draws_the_board(cli):
    status, out, _ = cli("roads", "--outcomes", "BBBBBBBBPPT")
    assert status == 0
    for title in ("bead plate", "big road", "big eye boy", "small road", "cockroach pig"):
        assert title in out


def test_the_board_reads_without_colour(cli):
    """In a pipe there is no colour: Banker, Player and tie, and red and blue, must differ by symbol."""
    status, out, _ = cli("roads", "--outcomes", "BPBBPTPPBPBBBPPBPB")
    assert status == 0 and "\x1b[" not in out
    panels = out.split("╭")
    bead, big = panels[1], panels[2]
    assert bead.count("B") >= 9 and bead.count("P") >= 8 and "T" in bead.replace("bead plate", "")
    assert "p" in big.replace("big road", "")  # the P cell on which the tie was marked
    derived = "".join(panels[3:])
    assert {"●", "○"} <= set(derived) or {"■", "□"} <= set(derived) or {"╱", "╲"} <= set(derived)


BAD_ROADS_INPUT = [
    (["roads", "--outcomes", "BPXB"], "outcomes may hold only B, P and T, found 'X'"),
    (["roads", "--outcomes", "bp"], "found 'bp'"),
    (["roads"], "give exactly one of --outcomes and --input"),
    (["roads", "--outcomes", "B", "--input", "x.jsonl"], "give exactly one of --outcomes and --input"),
    (["roads", "--input", "no/such/file.jsonl"], "cannot read no/such/file.jsonl"),
    (["roads", "--outcomes", "B", "--engine", "spark"], "Invalid value for '--engine'"),
    (["roads", "--outcomes", "BP" * 16_384], "at most 32,767 results"),
]


@pytest.mark.parametrize(("args", "message"), BAD_ROADS_INPUT)
def test_bad_roads_input(cli, args, message):
    status, out, err = cli(*args)
    assert status == 2 and out == "" and err.count("\n") == 1 and message in err


@pytest.mark.parametrize(("text", "message"), [
    ('{"id": 1, "outcomes": "BP"}\nnot json\n', "line 2: expected"),
    ('{"id": 1}\n', "line 1: expected"),
    ('{"id": 1, "outcomes": 5}\n', "line 1: outcomes must be a string"),
    ('{"id": 1, "outcomes": "BPQ"}\n', "found 'Q'"),
])
def test_bad_json_lines_are_refused_before_anything_is_printed(cli, tmp_path, text, message):
    lines = tmp_path / "bad.jsonl"
    lines.write_text(text)
    status, out, err = cli("roads", "--input", lines)
    assert status == 2 and out == "" and message in err
