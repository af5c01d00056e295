"""Which statements a reader of the warehouse may run: queries only (SELECT and its forms SHOW,
DESCRIBE, SUMMARIZE, PIVOT; EXPLAIN of a query; the PRAGMAs that only read), and no function that
changes the database or the process. Judged from DuckDB's own tokenizer and parser, the same on every
DuckDB the warehouse supports (1.4.2 and later), before any of the SQL runs."""

from dataclasses import dataclass

import duckdb

from pipeline.user_files import not_utf8

# Table functions that act rather than read: they write the database, switch logging or profiling
# (DuckDB 1.x lets them past a locked configuration; 1.5.6 aborts the process on enable_logging to a
# file), change the parser, or run SQL given as text or serialized, past this check.
SIDE_EFFECT_FUNCTIONS = frozenset({
    "checkpoint", "force_checkpoint", "enable_logging", "disable_logging", "truncate_duckdb_logs",
    "enable_profiling", "disable_profiling", "add_grammar_extension", "remove_grammar_extension",
    "register_external_resource", "register_external_resource_type", "create_external_resource",
    "deregister_external_resource", "destroy_external_resource", "json_execute_serialized_sql", "query",
})
READ_ONLY_PRAGMAS = frozenset({
    "show_tables", "show_tables_expanded", "show_databases", "database_list", "database_size", "storage_info",
    "table_info", "show", "version", "platform", "metadata_info", "collations", "user_agent",
})
QUERY_FORMS = ("pivot", "unpivot")  # DuckDB 1.x parses a PIVOT into a CREATE TYPE and a SELECT
REFUSED = ("statements are refused: the warehouse is read-only and queries may only read "
           "(SELECT, SHOW, DESCRIBE, SUMMARIZE, PIVOT, EXPLAIN of a query, or a PRAGMA that reads)")


@dataclass(frozen=True)
class _Word:
    start: int
    text: str  # lower case, without the quotes of a quoted name


def refuse_all_but_queries(con: duckdb.DuckDBPyConnection, sql: str) -> None:
    """Raise DuckDB's PermissionException, before any of `sql` runs, unless each of its statements
    only reads."""
    if what := not_utf8(sql):  # DuckDB's tokenizer would raise a TypeError
        raise duckdb.InvalidInputException(f"the query is not UTF-8 text ({what})")
    for text, words in _statements(sql):
        if refusal := _refusal(con, text, words):
            raise duckdb.PermissionException(refusal)


def each_statement(sql: str) -> list[str]:
    """The statements of `sql`, split at the semicolons the tokenizer finds (DuckDB would show the last
    one's rows alone); `sql` whole when it is not UTF-8 text or holds no statement (its error is then its own)."""
    if not_utf8(sql):
        return [sql]
    return [text for text, _ in _statements(sql)] or [sql]


def ends_a_statement(sql: str) -> bool:
    """Whether `sql` ends with a ';' that ends a statement, comments after it aside (`SELECT 1; -- note`):
    not a ';' inside a string, a quoted name or a comment (`SELECT a, -- the side;`), which a prompt
    reading line by line must not take for the statement's end. Text that is not UTF-8 (DuckDB's
    tokenizer refuses it) ends with a ';' of its own."""
    if not_utf8(sql):
        return sql.rstrip().endswith(";")
    tokens = duckdb.tokenize(sql)
    ends = [start for start, _ in tokens[1:]] + [len(sql)]
    for (start, kind), end in reversed(list(zip(tokens, ends))):
        text = sql[start:end].strip()
        if kind != duckdb.token_type.comment:
            return text == ";"
        if text.startswith("/*") and (len(text) < 4 or not text.endswith("*/")):
            return False  # a block comment still open: the statement goes on
    return False


def _statements(sql: str) -> list[tuple[str, list[_Word]]]:
    """Each statement of `sql` (split at the semicolons the tokenizer finds) with its words, comments left out."""
    tokens = duckdb.tokenize(sql)
    ends = [start for start, _ in tokens[1:]] + [len(sql)]
    statements, words, begin = [], [], 0
    for (start, kind), end in zip(tokens, ends):
        text = sql[start:end].strip()
        if kind == duckdb.token_type.comment:
            continue
        if text == ";":
            statements.append((sql[begin:start], words))
            words, begin = [], end
            continue
        words.append(_Word(start - begin, text.strip('"').lower()))
    statements.append((sql[begin:], words))
    return [(text, words) for text, words in statements if words]


def _refusal(con: duckdb.DuckDBPyConnection, text: str, words: list[_Word]) -> str | None:
    """Why the statement is refused, or None if it only reads."""
    called = [word.text for word, after in zip(words, words[1:]) if after.text == "(" and
              word.text in SIDE_EFFECT_FUNCTIONS]
    if called:
        return f"{called[0]}() is refused: it acts on the database or the server, and queries may only read"
    lead = words[0].text
    if lead == "pragma":
        reads = len(words) > 1 and words[1].text in READ_ONLY_PRAGMAS and all(w.text != "=" for w in words)
        return None if reads else ("PRAGMA statements are refused but for those that only read: "
                                   + ", ".join(sorted(READ_ONLY_PRAGMAS)))
    if lead == "explain":
        explained = _explained(words)
        inner = text[explained[0].start:] if explained else ""
        return f"EXPLAIN {REFUSED}" if not explained or _refusal(con, inner, _shifted(explained)) else None
    kinds = {_kind(statement) for statement in con.extract_statements(text)}
    allowed = {"SELECT", "MULTI", "CREATE"} if lead in QUERY_FORMS else {"SELECT"}
    if kinds and kinds <= allowed:
        return None
    # named as written: DuckDB parses INSTALL as a LOAD, CHECKPOINT as a CALL, USE and RESET as a SET
    written = sorted(kinds - allowed or kinds)[0] if lead == "with" else " ".join(
        word.text.upper() for word in words[:2 if lead == "force" else 1])
    return f"{written} {REFUSED}"


def _kind(statement) -> str:
    """DuckDB's type of a statement; UNKNOWN for one its Python enum does not name (UPDATE EXTENSIONS)."""
    try:
        return statement.type.name
    except ValueError:
        return "UNKNOWN"


def _explained(words: list[_Word]) -> list[_Word]:
    """The words of the statement an EXPLAIN [ANALYZE] [(options)] explains."""
    rest = words[1:]
    if rest and rest[0].text in ("analyze", "analyse"):
        rest = rest[1:]
    if rest and rest[0].text == "(":
        closing = next((i for i, word in enumerate(rest) if word.text == ")"), len(rest) - 1)
        rest = rest[closing + 1:]
    return rest


def _shifted(words: list[_Word]) -> list[_Word]:
    return [_Word(word.start - words[0].start, word.text) for word in words]
