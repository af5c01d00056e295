"""Reading the data files that ship with the package (rule sets, draw tables, schemas)."""

import re
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path

import yaml

from pipeline.errors import BaccaratError
from pipeline.user_files import UserFile

NAME = re.compile(r"^[a-z0-9_]{1,64}$")
MAX_PROBLEMS = 8

# conf/, schemas/ and bi/superset/ sit at the top of the repository; links inside the package point at them.
_FOLDERS = {"conf": "conf", "schemas": "schemas_data", "bi/superset": "bi_superset"}


def resource(top: str, *parts: str) -> Traversable:
    return files("pipeline").joinpath(_FOLDERS[top], *parts)


# libyaml's parser when PyYAML was built with it (its wheels are): parsing the contracts every command reads
# takes a quarter of the time of the pure-Python one.
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _UniqueKeyLoader(_SAFE_LOADER):
    """YAML's safe loader, refusing a key given twice in one mapping (YAML keeps the last silently)."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep)


def read_yaml(source: Traversable | UserFile, what: str) -> dict:
    """Parse a YAML mapping, turning every failure into a one-line BaccaratError. A shipped file is a
    Traversable, a user's a UserFile (read only if it is a regular file, and only so many bytes)."""
    try:
        document = yaml.load(source.read_text(encoding="utf-8"), Loader=_UniqueKeyLoader)
    except FileNotFoundError:
        raise BaccaratError(f"{what}: file not found ({source})") from None
    except (OSError, UnicodeDecodeError) as error:
        raise BaccaratError(f"{what}: cannot read {source}: {error}") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        if str(getattr(error, "problem", "")).startswith("duplicate key"):
            raise BaccaratError(f"{what}: {error.problem}{where} ({source})") from None
        raise BaccaratError(f"{what}: not valid YAML{where} ({source})") from None
    if not isinstance(document, dict):
        raise BaccaratError(f"{what}: expected a mapping at the top of {source}")
    return document


def known_names(folder: str) -> list[str]:
    """The shipped files of conf/<folder>, by name."""
    return sorted(entry.name.removesuffix(".yaml") for entry in resource("conf", folder).iterdir()
                  if entry.name.endswith(".yaml"))


def locate(folder: str, name_or_path: str, noun: str) -> Traversable | UserFile:
    """A shipped file of conf/<folder> by name, or a YAML file by path (read when parsed); else a
    one-line error."""
    if NAME.match(name_or_path):
        if name_or_path not in known_names(folder):
            raise BaccaratError(
                f"unknown {noun} {name_or_path!r} (known: {', '.join(known_names(folder))}; "
                "or give the path of a .yaml file)"
            )
        return resource("conf", folder, f"{name_or_path}.yaml")
    return UserFile(name_or_path, noun)


def absolute_paths(names_or_paths: str) -> str:
    """Comma-separated names or paths of YAML files (--counts, one --systems), each path made absolute and
    each name kept, as locate tells them apart: what a commit records for its repair line to repeat, which
    then reads the same files from any folder."""
    return ",".join(name if NAME.match(name) else str(Path(name).absolute())
                    for name in (given.strip() for given in names_or_paths.split(",")))


def validation_problems(error, names: dict[tuple, str] | None = None) -> str:
    """A pydantic ValidationError as one line: where, then what, for each of its first MAX_PROBLEMS
    problems (a file of a few hundred kilobytes can hold hundreds of thousands). `names`: what to call a
    place given some other way than in the file (an option, `--bankroll 5`), by its key path."""
    problems = []
    for problem in error.errors()[:MAX_PROBLEMS]:
        where = (names or {}).get(problem["loc"]) or ".".join(str(part) for part in problem["loc"])
        message = problem["msg"].removeprefix("Value error, ")
        problems.append(f"{where}: {message}" if where else message)
    more = error.error_count() - len(problems)
    return "; ".join(problems) + (f"; and {more:,} more" if more > 0 else "")


def shipped_or_file(folder: str, played: dict) -> str:
    """The option naming a strategy or banque policy a run recorded (`played`): its name when conf/FOLDER
    ships that document under it, else the YAML file it came from (pipeline/runs.py rules_argument does
    the same for the rule set)."""
    name = played["name"]
    shipped = read_yaml(resource("conf", folder, f"{name}.yaml"), name) if name in known_names(folder) else None
    return name if shipped is not None and _without_nulls(shipped) == _without_nulls(played) else f"{name}.yaml"


def _without_nulls(document):
    """A document without its null values: an option left out of a file is recorded as null."""
    if isinstance(document, dict):
        return {key: _without_nulls(value) for key, value in document.items() if value is not None}
    return [_without_nulls(value) for value in document] if isinstance(document, list) else document
