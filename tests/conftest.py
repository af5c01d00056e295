import pytest
import yaml

from pipeline.cli import main
from pipeline.config_files import resource


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
