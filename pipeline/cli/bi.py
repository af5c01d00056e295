"""`baccarat bi`: dashboards for BI tools, as code."""

from pathlib import Path
from typing import Annotated

import typer

from pipeline.cli.app import DEFAULT_OUT, OutOption, WarehouseOption, path_option
from pipeline.user_files import output_file

bi = typer.Typer(no_args_is_help=True, rich_markup_mode=None, help="Dashboards for BI tools, as code.")


@bi.command("superset-bundle")
def superset_bundle(
    output: Annotated[Path, path_option("-o", "--output", help="The zip to write (replaced whole).")],
    out: OutOption = DEFAULT_OUT,
    warehouse: WarehouseOption = None,
) -> None:
    """Write the Superset dashboard "Baccarat: runs" as a zip to import (docs/serving.md)."""
    from pipeline.marts.superset_bundle import ROOT_FOLDER, warehouse_uri, write_bundle

    warehouse = warehouse or out.warehouse_path()

    written = write_bundle(warehouse, output_file(output, "-o", f"{ROOT_FOLDER}/".encode()))
    print(f"superset bundle: {written} (database {warehouse_uri(warehouse)})")
