from pathlib import Path

import polars as pl
import pytest
import yaml

from pipeline.cli import main, spark_session
from pipeline.config_files import resource
from pipeline.runs import read_manifest
from pipeline.simulate import job
from pipeline.tables import load_rule_set


@pytest.fixture(scope="session")
def spark():
    """The one SparkSession of the suite: local[2], UI off."""
    session = spark_session("local[2]", "baccarat-tests")
    yield session
    session.stop()


def simulate(spark, out: Path, rules: str = "punto_banco", seed: int = 7, shoes: int = 200,
             partitions: int = 3, run_id: str | None = None) -> dict:
    """Run the simulation job into `out` through the suite's session; returns the manifest."""
    plan = job.Plan(run_id or f"{rules}-{seed}-{shoes}", load_rule_set(rules), seed, shoes, out, partitions)
    assert job.prepare(plan, overwrite=False) is None
    return job.run(spark, plan)


def read_table(out: Path, run_id: str, table: str) -> pl.DataFrame:
    """Every file of a committed run's table, in the manifest's order."""
    manifest = read_manifest(out, run_id)
    paths = [out / f["path"] for f in manifest["files"] if f["table"] == table]
    return pl.concat([pl.read_parquet(p, hive_partitioning=False) for p in paths])


@pytest.fixture
def cli(capsys):
    """Run `baccarat ARGS...` in process; returns (exit status, stdout, stderr)."""

    def run(*args: str):
        status = main([str(arg) for arg in args])
        captured = capsys.readouterr()
        return status, captured.out, captured.err

    return run


@pytest.fixture
def rules_file(tmp_path):
    """Write a variant of a shipped rule set to tmp_path; `changes` are merged in, None deletes a key."""

    def write(changes: dict, base: str = "punto_banco"):
        document = yaml.safe_load(resource("conf", "rules", f"{base}.yaml").read_text())
        for key, value in changes.items():
            if value is None:
                document.pop(key)
            else:
                document[key] = value
        path = tmp_path / "rules.yaml"
        path.write_text(yaml.safe_dump(document))
        return path

    return write
