"""The Superset dashboard "Baccarat: runs" as code: the files of bi/superset/ (Superset's v1 import
format, stable UUIDs; shipped in the package as pipeline/bi_superset) with the warehouse's
`duckdb+baccarat` URI written into its database, zipped as `superset import-dashboards -p`,
POST /api/v1/dashboard/import/ and POST /api/v1/assets/import/ take it (docs/serving.md)."""

import zipfile
from pathlib import Path

import yaml

from pipeline.atomic import replacing
from pipeline.config_files import resource
from pipeline.errors import BaccaratError, cannot_write
from pipeline.marts.warehouse import open_warehouse

DATABASE = "databases/baccarat.yaml"
ROOT_FOLDER = "baccarat_runs"  # Superset reads a bundle's files under one folder of the zip
_MISREAD_IN_A_URI = ("?", "#", "%")  # SQLAlchemy would read the rest of the path as a query or a fragment
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)  # the same bytes for the same warehouse


def bundle_files() -> dict[str, str]:
    """Every YAML file of the bundle as shipped, by its path in the bundle."""
    found: dict[str, str] = {}
    folders = [(resource("bi/superset"), "")]
    while folders:
        folder, prefix = folders.pop()
        for entry in folder.iterdir():
            if entry.is_dir():
                folders.append((entry, f"{prefix}{entry.name}/"))
            elif entry.name.endswith(".yaml"):
                found[prefix + entry.name] = entry.read_text(encoding="utf-8")
    return dict(sorted(found.items()))


def warehouse_uri(warehouse: Path) -> str:
    """The `duckdb+baccarat` URI of the warehouse by its stable (absolute, unresolved) path, so a
    connection opens whatever the last publish points it at."""
    path = str(Path(warehouse).absolute())
    if any(mark in path for mark in _MISREAD_IN_A_URI) or not path.isprintable():
        raise BaccaratError(f"--warehouse {str(warehouse)!r}: a path with ?, #, % or a control character cannot go "
                            "into a database URI; move the data folder to a plainer path")
    return f"duckdb+baccarat:///{path}"


def render_bundle(warehouse: Path) -> dict[str, str]:
    """The bundle's files with the warehouse's URI in its database."""
    files = bundle_files()
    database = yaml.safe_load(files[DATABASE])
    database["sqlalchemy_uri"] = warehouse_uri(warehouse)
    return files | {DATABASE: yaml.safe_dump(database, sort_keys=False, allow_unicode=True)}


def dataset_tables(files: dict[str, str]) -> set[str]:
    return {yaml.safe_load(text)["table_name"] for name, text in files.items() if name.startswith("datasets/")}


def check_published(warehouse: Path, tables: set[str]) -> None:
    """The warehouse opens as its readers open it, and holds every table the bundle's datasets read."""
    with open_warehouse(Path(warehouse)) as con:
        present = {name for (name,) in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    if missing := sorted(tables - present):
        raise BaccaratError(f"{warehouse} is not a warehouse `baccarat marts` published: it has no table "
                            f"{', '.join(missing)}")


def write_bundle(warehouse: Path, target: Path) -> Path:
    """Check the warehouse, then write the rendered bundle to `target` as a zip, whole or not at all."""
    files = render_bundle(warehouse)
    check_published(warehouse, dataset_tables(files))
    try:
        with replacing(target) as temporary, zipfile.ZipFile(temporary, "w", zipfile.ZIP_DEFLATED) as bundle:
            for name, text in files.items():
                bundle.writestr(zipfile.ZipInfo(f"{ROOT_FOLDER}/{name}", _ZIP_TIME), text)
    except OSError as error:
        raise cannot_write(f"the bundle {target}", error) from None
    return target
