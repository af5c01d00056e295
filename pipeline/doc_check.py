"""`baccarat docs --check`: the documents agree with the repository.

Four checks, each problem one line: the data dictionary (docs/tables.md) matches schemas/,
every relative link in README.md and docs/*.md resolves to a file of the repository (and a
`#fragment` to a heading of it), every file of the repository the text names by its path
(tests/unit/test_risk.py) exists, and every `baccarat COMMAND` the documents show in code
exists. The documents are the markdown files beside the dictionary and the README.md one
folder up, the repository's root.
"""

import re
from collections.abc import Iterable
from pathlib import Path

from pipeline.dictionary import data_dictionary
from pipeline.errors import BaccaratError
from pipeline.user_files import read_text

DICTIONARY_BYTES = 1 << 20  # the dictionary is about 40 KB

_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
_EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)  # https:, mailto:, ...
_FENCE = re.compile(r"^\s*(```|~~~)")
_INLINE_CODE = re.compile(r"`([^`]+)`")
_SHELL_COMMAND = re.compile(r"(?:^\s*(?:\S*\$\s+)?|&&\s*|\|\s*|;\s*|\$?\(\s*)baccarat ([a-z][\w-]*)")  # a code line
_CODE_COMMAND = re.compile(r"^baccarat ([a-z][\w-]*)")  # an inline code span
_REPOSITORY_FILE = re.compile(r"(?<![\w./-])((?:pipeline|tests|jobs|benchmarks|schemas|conf|docs)/[\w./-]*\w\.(?:py|ya?ml|md|sql|json))\b")


def document_problems(dictionary: Path, commands: Iterable[str]) -> list[str]:
    """Every way the documents disagree with the repository, one line each (none: all is well)."""
    root = dictionary.resolve().parent.parent
    problems = _dictionary_problems(dictionary)
    readme = _readme(dictionary)
    documents = sorted(dictionary.resolve().parent.glob("*.md")) + ([readme] if readme else [])
    known = set(commands)
    for document in documents:
        problems += _document_problems(document, root, known)
    return problems


def documents_checked(dictionary: Path) -> str:
    """What document_problems reads, named from the current folder where it is below: `README.md and docs/`."""
    readme = _readme(dictionary)
    return f"{_shown(readme) + ' and ' if readme else ''}{_shown(dictionary.resolve().parent)}/"


def _readme(dictionary: Path) -> Path | None:
    """The README.md one folder above the dictionary's, the repository's root, if there is one."""
    readme = dictionary.resolve().parent.parent / "README.md"
    return readme if readme.is_file() else None


def _shown(path: Path) -> str:
    return path.relative_to(Path.cwd()).as_posix() if path.is_relative_to(Path.cwd()) else path.as_posix()


def _dictionary_problems(dictionary: Path) -> list[str]:
    if not dictionary.exists():
        return [f"{dictionary} does not exist: run `baccarat docs --path {dictionary}`"]
    try:
        text = read_text(dictionary, "--path", DICTIONARY_BYTES, "Markdown file")
    except BaccaratError as error:  # a folder, a FIFO, a device, a file over the cap: never read
        return [str(error)]
    if text != data_dictionary():
        return [f"{dictionary} is out of date with schemas/: run `baccarat docs`"]
    return []


def _document_problems(document: Path, root: Path, commands: set[str]) -> list[str]:
    name = document.relative_to(root).as_posix()
    problems = []
    for number, line, in_code in _lines(document):
        if in_code:
            named = _SHELL_COMMAND.findall(line)
        else:
            named = [c for span in _INLINE_CODE.findall(line) for c in _CODE_COMMAND.findall(span)]
            for target in _LINK.findall(_INLINE_CODE.sub("", line)):
                problem = _link_problem(document, root, target)
                if problem:
                    problems.append(f"{name}:{number}: link {target}: {problem}")
            problems += [f"{name}:{number}: {path}: no such file in the repository"
                         for path in dict.fromkeys(_REPOSITORY_FILE.findall(_LINK.sub("", line)))
                         if not (root / path).is_file()]
        problems += [f"{name}:{number}: `baccarat {command}` is not a baccarat command"
                     for command in named if command not in commands]
    return problems


def _lines(document: Path):
    """(line number, line, inside a fenced code block) for every line but the fences."""
    in_code = False
    for number, line in enumerate(document.read_text(encoding="utf-8").splitlines(), start=1):
        if _FENCE.match(line):
            in_code = not in_code
            continue
        yield number, line, in_code


def _link_problem(document: Path, root: Path, target: str) -> str | None:
    if _EXTERNAL.match(target):
        return None
    path, _, fragment = target.partition("#")
    linked = (document.parent / path).resolve() if path else document
    if not linked.is_relative_to(root):
        return "points outside the repository"
    if not linked.exists():
        return "no such file in the repository"
    if fragment and linked.suffix == ".md" and fragment not in _anchors(linked):
        return f"no heading with the anchor #{fragment} in {linked.relative_to(root).as_posix()}"
    return None


def _anchors(document: Path) -> set[str]:
    """The anchors GitHub gives the document's headings (a repeated one gets -1, -2, ...)."""
    anchors: set[str] = set()
    for _, line, in_code in _lines(document):
        heading = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if in_code or not heading:
            continue
        slug = re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower()).replace(" ", "-")
        anchor, repeat = slug, 0
        while anchor in anchors:
            repeat += 1
            anchor = f"{slug}-{repeat}"
        anchors.add(anchor)
    return anchors
