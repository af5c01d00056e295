"""The Superset bundle (bi/superset/, rendered by `baccarat bi superset-bundle`): every reference in it
resolves, every table and column it names is in the warehouse's contracts, its UUIDs are stable, and the
command writes the zip whole or, on bad input, writes nothing and says so in one line."""

import io
import json
import zipfile
from pathlib import Path

import duckdb
import pytest
import yaml

from pipeline.cli import main
from pipeline.marts.inputs import EVERY_MART
from pipeline.marts.superset_bundle import DATABASE, ROOT_FOLDER, bundle_files, render_bundle, warehouse_uri
from pipeline.schemas import contract

REPOSITORY = Path(__file__).resolve().parents[2]
PERCENT_CHARTS = {"house_edge", "outcome_shares", "streaks", "ev_convergence", "advantage_by_depth"}


def documents(files: dict[str, str], folder: str) -> dict[str, dict]:
    return {name: yaml.safe_load(text) for name, text in files.items() if name.startswith(folder)}


def named_columns(params: dict) -> set[str]:
    """Every column a chart's form data names: axis, groups, raw columns, metrics' and filters' columns."""
    metrics = params.get("metrics", []) + ([params["metric"]] if "metric" in params else [])
    return ({params[key] for key in ("x_axis",) if key in params} | set(params.get("groupby", []))
            | set(params.get("all_columns", [])) | {m["column"]["column_name"] for m in metrics}
            | {f["subject"] for f in params.get("adhoc_filters", [])})


def queried_columns(query_context: str) -> set[str]:
    """Every column the saved query (what the chart-data API runs) names."""
    queries = json.loads(query_context)["queries"]
    return ({c for q in queries for c in q["columns"]} | {f["col"] for q in queries for f in q["filters"]}
            | {m["column"]["column_name"] for q in queries for m in q["metrics"]})


@pytest.fixture(scope="module")
def files() -> dict[str, str]:
    return bundle_files()


@pytest.fixture(scope="module")
def datasets(files) -> dict[str, dict]:
    return {d["uuid"]: d for d in documents(files, "datasets/").values()}


def test_the_bundle_has_superset_s_folders_and_eight_charts_on_one_dashboard(files):
    assert {name.split("/")[0] for name in files} == {"metadata.yaml", "databases", "datasets", "charts",
                                                       "dashboards"}
    assert yaml.safe_load(files["metadata.yaml"])["version"] == "1.0.0"
    (dashboard,) = documents(files, "dashboards/").values()
    assert dashboard["dashboard_title"] == "Baccarat: runs"
    placed = {item["meta"]["uuid"] for item in dashboard["position"].values()
              if isinstance(item, dict) and item.get("type") == "CHART"}
    assert placed == {chart["uuid"] for chart in documents(files, "charts/").values()} and len(placed) >= 8


def test_every_uuid_is_unique_and_every_reference_resolves(files, datasets):
    everything = [yaml.safe_load(text) for name, text in files.items() if name != "metadata.yaml"]
    uuids = [doc["uuid"] for doc in everything]
    assert len(set(uuids)) == len(uuids)
    (database,) = documents(files, "databases/").values()
    assert {d["database_uuid"] for d in datasets.values()} == {database["uuid"]}
    assert {c["dataset_uuid"] for c in documents(files, "charts/").values()} <= set(datasets)
    (dashboard,) = documents(files, "dashboards/").values()
    filters = dashboard["metadata"]["native_filter_configuration"]
    assert {f["targets"][0]["column"]["name"] for f in filters} == {"run_id", "rules"}
    assert {t["datasetUuid"] for f in filters for t in f["targets"]} <= set(datasets)


def test_every_dataset_is_a_warehouse_table_with_its_contract_s_columns(datasets):
    for dataset in datasets.values():
        assert dataset["table_name"] in EVERY_MART
        expected = [c.name for c in contract(dataset["table_name"]).resolved()]
        assert [c["column_name"] for c in dataset["columns"]] == expected, dataset["table_name"]


def test_every_column_a_chart_names_is_in_its_table_s_contract(files, datasets):
    for name, chart in documents(files, "charts/").items():
        table = datasets[chart["dataset_uuid"]]["table_name"]
        columns = {c.name for c in contract(table).resolved()}
        assert named_columns(chart["params"]) <= columns, name
        assert queried_columns(chart["query_context"]) <= columns, name
        assert named_columns(chart["params"]) == queried_columns(chart["query_context"]), name


def test_titles_descriptions_and_percent_axes(files):
    charts = {Path(name).stem: chart for name, chart in documents(files, "charts/").items()}
    assert all(chart["slice_name"] and len(chart["description"]) > 40 for chart in charts.values())
    assert {key for key, chart in charts.items() if chart["params"].get("y_axis_format", "").endswith("%")} \
        == PERCENT_CHARTS
    assert charts["road_patterns"]["params"]["column_config"]["p_next_banker"]["d3NumberFormat"].endswith("%")


def test_the_uri_names_the_warehouse_by_its_absolute_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert warehouse_uri(Path("data/warehouse.duckdb")) == f"duckdb+baccarat:///{tmp_path}/data/warehouse.duckdb"
    rendered = yaml.safe_load(render_bundle(Path("data/warehouse.duckdb"))[DATABASE])
    assert rendered["sqlalchemy_uri"] == f"duckdb+baccarat:////{str(tmp_path).lstrip('/')}/data/warehouse.duckdb"
    assert rendered["extra"] == {"engine_params": {"connect_args": {"read_only": True}}}


def test_rendering_changes_only_the_database_uri(files):
    rendered = render_bundle(Path("/a/warehouse.duckdb"))
    assert {name for name in files if rendered[name] != files[name]} == {DATABASE}
    assert render_bundle(Path("/a/warehouse.duckdb")) == rendered


def published_like(folder: Path) -> Path:
    """A DuckDB file with every mart as an empty table of its contract's types, as a publish makes for
    runs without rows."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "warehouse.duckdb"
    with duckdb.connect(str(path)) as con:
        for name in EVERY_MART:
            empty = contract(name).arrow().empty_table()  # noqa: F841 (read by DuckDB by its name)
            con.execute(f"CREATE TABLE {name} AS SELECT * FROM empty")
    return path


def test_the_command_writes_the_same_zip_twice_with_stable_uuids(tmp_path, capsys):
    warehouse = published_like(tmp_path / "data")
    zips = [tmp_path / "one.zip", tmp_path / "two.zip"]
    for target in zips:
        assert main(["bi", "superset-bundle", "--warehouse", str(warehouse), "-o", str(target)]) == 0
    assert zips[0].read_bytes() == zips[1].read_bytes()
    with zipfile.ZipFile(io.BytesIO(zips[0].read_bytes())) as bundle:
        names = bundle.namelist()
        database = yaml.safe_load(bundle.read(f"{ROOT_FOLDER}/{DATABASE}"))
    assert sorted(names) == sorted(f"{ROOT_FOLDER}/{name}" for name in bundle_files())
    assert database["sqlalchemy_uri"] == f"duckdb+baccarat:///{warehouse}"
    assert str(zips[1]) in capsys.readouterr().out


def test_a_warehouse_that_does_not_exist_is_one_line_and_nothing_is_written(tmp_path, capsys):
    target = tmp_path / "bundle.zip"
    assert main(["bi", "superset-bundle", "--warehouse", str(tmp_path / "none.duckdb"), "-o", str(target)]) == 2
    assert capsys.readouterr().err.count("\n") == 1 and list(tmp_path.iterdir()) == []


def test_a_duckdb_file_that_is_not_a_published_warehouse_is_refused(tmp_path, capsys):
    other = tmp_path / "other.duckdb"
    duckdb.connect(str(other)).close()
    target = tmp_path / "bundle.zip"
    assert main(["bi", "superset-bundle", "--warehouse", str(other), "-o", str(target)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a warehouse `baccarat marts` published" in err
    assert not target.exists()


def test_an_unwritable_output_is_one_line_and_nothing_is_written(tmp_path, capsys):
    """No one, root either, can make a file in /proc."""
    warehouse = published_like(tmp_path / "data")
    assert main(["bi", "superset-bundle", "--warehouse", str(warehouse), "-o", "/proc/bundle.zip"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot write the bundle /proc/bundle.zip" in err
    assert not Path("/proc/bundle.zip").exists()


@pytest.mark.parametrize("target", ["folder", "under-a-file/b.zip"])
def test_an_output_no_file_can_go_to_is_one_line_and_nothing_is_written(tmp_path, capsys, target):
    warehouse = published_like(tmp_path / "data")
    (tmp_path / "folder").mkdir()
    (tmp_path / "under-a-file").write_text("")
    before = sorted(tmp_path.rglob("*"))
    assert main(["bi", "superset-bundle", "--warehouse", str(warehouse), "-o", str(tmp_path / target)]) == 2
    assert capsys.readouterr().err.count("\n") == 1 and sorted(tmp_path.rglob("*")) == before


def test_a_dash_output_is_refused_not_written_as_a_file_named_dash(tmp_path, capsys, monkeypatch):
    warehouse = published_like(tmp_path / "data")
    monkeypatch.chdir(tmp_path)
    before = sorted(tmp_path.rglob("*"))
    assert main(["bi", "superset-bundle", "--warehouse", str(warehouse), "-o", "-"]) == 2
    printed = capsys.readouterr()
    assert printed.out == "" and printed.err.count("\n") == 1 and "not stdout" in printed.err
    assert sorted(tmp_path.rglob("*")) == before


def test_a_path_a_uri_would_misread_is_refused(tmp_path, capsys):
    warehouse = published_like(tmp_path / "da#ta")
    assert main(["bi", "superset-bundle", "--warehouse", str(warehouse), "-o", str(tmp_path / "b.zip")]) == 2
    assert "cannot go into a database URI" in capsys.readouterr().err
    assert not (tmp_path / "b.zip").exists()


def test_an_output_that_is_the_warehouse_itself_is_refused_and_the_warehouse_kept(tmp_path, capsys, monkeypatch):
    warehouse = published_like(tmp_path / "data")
    before = warehouse.read_bytes()
    monkeypatch.chdir(tmp_path)
    for target in (str(warehouse), "data/../data/warehouse.duckdb"):
        assert main(["bi", "superset-bundle", "--warehouse", str(warehouse), "-o", target]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "is a DuckDB database (the warehouse itself?)" in err
    assert warehouse.read_bytes() == before


def test_the_bundle_took_no_out_where_every_other_command_finds_the_warehouse_by_it(tmp_path, capsys):
    """`baccarat bi superset-bundle --out data2 -o b.zip` was refused ('No such option: --out'): the
    bundle now reads OUT/warehouse.duckdb, as `baccarat sql --out` does."""
    warehouse = published_like(tmp_path / "elsewhere")
    target = tmp_path / "bundle.zip"
    assert main(["bi", "superset-bundle", "--out", str(tmp_path / "elsewhere"), "-o", str(target)]) == 0
    with zipfile.ZipFile(target) as bundle:
        database = yaml.safe_load(bundle.read(f"{ROOT_FOLDER}/{DATABASE}"))
    assert database["sqlalchemy_uri"] == f"duckdb+baccarat:///{warehouse}"


def test_a_warehouse_that_is_a_folder_is_named_a_folder_in_one_line(tmp_path, capsys):
    (tmp_path / "data").mkdir()
    target = tmp_path / "bundle.zip"
    assert main(["bi", "superset-bundle", "--warehouse", str(tmp_path / "data"), "-o", str(target)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is a folder, not a DuckDB file" in err
    assert not target.exists()
