"""Tests for featcheck.manifest.spans: positions of keys and values in TOML."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

import pytest
import tomlkit
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from featcheck.manifest.spans import Entry, KeyPath, Span, index_spans


def _at(text: str, span: Span) -> str:
    """The text a span covers (a BOM is not counted, CRLF is kept)."""
    lines = text.removeprefix("\ufeff").split("\n")
    first = lines[span.line - 1]
    if span.line == span.end_line:
        return first[span.column - 1 : span.end_column - 1]
    middle = lines[span.line : span.end_line - 1]
    last = lines[span.end_line - 1][: span.end_column - 1]
    return "\n".join([first[span.column - 1 :], *middle, last])


def _p(*parts: str | int) -> KeyPath:
    """A key path; spelled as a call because mypy rejects ``d[(*a, b)]`` below 3.11."""
    return parts


def _key(entries: dict[KeyPath, Entry], path: KeyPath) -> Span:
    return entries[path].key


def _value(entries: dict[KeyPath, Entry], path: KeyPath) -> Span:
    value = entries[path].value
    assert value is not None, f"{path} has no value span"
    return value


# -- realistic Cargo.toml shapes ---------------------------------------------


def test_inline_table_dependency() -> None:
    text = (
        "[dependencies]\n"
        'burn = { version = "1", default-features = false, '
        'features = ["std", "flex"] }\n'
    )
    spans = index_spans(text)
    deps = ("dependencies",)
    burn = (*deps, "burn")
    assert spans[deps] == Entry(Span(1, 2, 1, 14), None)
    assert spans[burn] == Entry(Span(2, 1, 2, 5), Span(2, 8, 2, 79))
    assert _at(text, _value(spans, burn)).startswith("{ version")
    assert _at(text, _value(spans, burn)).endswith("] }")
    assert spans[_p(*burn, "version")] == Entry(Span(2, 10, 2, 17), Span(2, 20, 2, 23))
    assert spans[_p(*burn, "default-features")] == Entry(Span(2, 25, 2, 41), Span(2, 44, 2, 49))
    assert _at(text, _value(spans, (*burn, "default-features"))) == "false"
    features = (*burn, "features")
    assert spans[features] == Entry(Span(2, 51, 2, 59), Span(2, 62, 2, 77))
    assert _at(text, _value(spans, features)) == '["std", "flex"]'
    assert spans[_p(*features, 0)] == Entry(Span(2, 63, 2, 68), Span(2, 63, 2, 68))
    assert spans[_p(*features, 1)] == Entry(Span(2, 70, 2, 76), Span(2, 70, 2, 76))
    assert _at(text, _key(spans, (*features, 1))) == '"flex"'
    assert len(spans) == 7


def test_table_form_dependency_with_commented_out_feature() -> None:
    text = (
        "[package]\n"
        'name = "demo"\n'
        "\n"
        "[dependencies.burn]\n"
        'version = "0.16"\n'
        "default-features = false\n"
        "features = [\n"
        '    "std",\n'
        '    # "rayon",\n'
        '    "flex",  # the fast backend\n'
        "]\n"
    )
    spans = index_spans(text)
    burn = ("dependencies", "burn")
    # The implicit parent points at its segment of the header.
    assert spans[("dependencies",)] == Entry(Span(4, 2, 4, 14), None)
    assert spans[burn] == Entry(Span(4, 15, 4, 19), None)
    assert spans[_p(*burn, "version")] == Entry(Span(5, 1, 5, 8), Span(5, 11, 5, 17))
    assert spans[_p(*burn, "features")] == Entry(Span(7, 1, 7, 9), Span(7, 12, 11, 2))
    assert _at(text, _value(spans, (*burn, "features"))).startswith("[\n")
    # The commented-out item neither counts nor shifts the others.
    assert spans[_p(*burn, "features", 0)].key == Span(8, 5, 8, 10)
    assert spans[_p(*burn, "features", 1)].key == Span(10, 5, 10, 11)
    assert _at(text, _key(spans, (*burn, "features", 1))) == '"flex"'
    assert (*burn, "features", 2) not in spans


def test_dotted_workspace_key() -> None:
    text = "[dependencies]\nburn.workspace = true\nserde = { workspace = true }\n"
    spans = index_spans(text)
    assert spans[("dependencies", "burn")] == Entry(Span(2, 1, 2, 5), None)
    assert spans[("dependencies", "burn", "workspace")] == Entry(
        Span(2, 6, 2, 15), Span(2, 18, 2, 22)
    )
    assert spans[("dependencies", "serde", "workspace")] == Entry(
        Span(3, 11, 3, 20), Span(3, 23, 3, 27)
    )


def test_renamed_dependency() -> None:
    text = '[dependencies]\nnn = { package = "burn", version = "0.16", features = ["train"] }\n'
    spans = index_spans(text)
    nn = ("dependencies", "nn")
    assert spans[nn].key == Span(2, 1, 2, 3)
    assert spans[_p(*nn, "package")] == Entry(Span(2, 8, 2, 15), Span(2, 18, 2, 24))
    assert _at(text, _value(spans, (*nn, "package"))) == '"burn"'
    assert spans[_p(*nn, "features", 0)].key == Span(2, 56, 2, 63)
    assert _at(text, _key(spans, (*nn, "features", 0))) == '"train"'


def test_target_specific_tables_with_quoted_cfg_keys() -> None:
    text = (
        "[target.'cfg(target_os = \"linux\")'.dependencies]\n"
        'nix = "0.27"\n'
        "\n"
        '[target."cfg(windows)".dependencies.winapi]\n'
        'version = "0.3"\n'
        '[target."cfg(target_os = \\"macos\\")".dev-dependencies]\n'
        'core-foundation = "0.9"\n'
    )
    spans = index_spans(text)
    linux = ("target", 'cfg(target_os = "linux")')
    assert spans[("target",)] == Entry(Span(1, 2, 1, 8), None)
    assert spans[linux] == Entry(Span(1, 9, 1, 35), None)
    assert _at(text, spans[linux].key) == "'cfg(target_os = \"linux\")'"
    assert spans[_p(*linux, "dependencies")] == Entry(Span(1, 36, 1, 48), None)
    assert spans[_p(*linux, "dependencies", "nix")].value == Span(2, 7, 2, 13)

    windows = ("target", "cfg(windows)", "dependencies", "winapi")
    assert spans[windows[:2]].key == Span(4, 9, 4, 23)
    assert spans[windows] == Entry(Span(4, 37, 4, 43), None)
    assert spans[_p(*windows, "version")].key == Span(5, 1, 5, 8)

    # Escapes in basic-string keys are decoded; the span keeps the source.
    macos = ("target", 'cfg(target_os = "macos")', "dev-dependencies")
    assert spans[macos[:2]].key == Span(6, 9, 6, 37)
    assert _at(text, spans[macos[:2]].key) == '"cfg(target_os = \\"macos\\")"'
    assert spans[_p(*macos, "core-foundation")].key == Span(7, 1, 7, 16)


def test_workspace_dependencies() -> None:
    text = (
        "[workspace]\n"
        'members = ["crates/*"]\n'
        'resolver = "2"\n'
        "\n"
        "[workspace.dependencies]\n"
        'burn = { version = "0.16", default-features = false }\n'
        'serde = "1"\n'
    )
    spans = index_spans(text)
    assert spans[("workspace",)] == Entry(Span(1, 2, 1, 11), None)
    assert spans[("workspace", "members", 0)].key == Span(2, 12, 2, 22)
    assert spans[("workspace", "dependencies")] == Entry(Span(5, 12, 5, 24), None)
    burn = ("workspace", "dependencies", "burn")
    assert spans[burn] == Entry(Span(6, 1, 6, 5), Span(6, 8, 6, 54))
    assert spans[_p(*burn, "default-features")].value == Span(6, 47, 6, 52)
    assert spans[("workspace", "dependencies", "serde")].value == Span(7, 9, 7, 12)


def test_arrays_of_tables() -> None:
    text = (
        "[[bin]]\n"
        'name = "a"\n'
        'path = "src/a.rs"\n'
        "\n"
        "[[bin]]\n"
        'name = "b"\n'
        "[bin.metadata]\n"
        "x = 1\n"
        "[[bin.extra]]\n"
        "y = 2\n"
        "[[bin]]\n"
        "[[bin.extra]]\n"
        "y = 3\n"
    )
    spans = index_spans(text)
    assert spans[("bin",)] == Entry(Span(1, 3, 1, 6), None)
    # An item's key is its whole [[header]].
    assert spans[("bin", 0)] == Entry(Span(1, 1, 1, 8), None)
    assert spans[("bin", 0, "name")] == Entry(Span(2, 1, 2, 5), Span(2, 8, 2, 11))
    assert spans[("bin", 0, "path")].value == Span(3, 8, 3, 18)
    assert spans[("bin", 1)] == Entry(Span(5, 1, 5, 8), None)
    assert spans[("bin", 1, "name")].value == Span(6, 8, 6, 11)
    # Headers below an array of tables extend its latest item.
    assert spans[("bin", 1, "metadata")] == Entry(Span(7, 6, 7, 14), None)
    assert spans[("bin", 1, "metadata", "x")].key == Span(8, 1, 8, 2)
    assert spans[("bin", 1, "extra")] == Entry(Span(9, 7, 9, 12), None)
    assert spans[("bin", 1, "extra", 0)] == Entry(Span(9, 1, 9, 14), None)
    assert spans[("bin", 1, "extra", 0, "y")].value == Span(10, 5, 10, 6)
    assert spans[("bin", 2)] == Entry(Span(11, 1, 11, 8), None)
    assert spans[("bin", 2, "extra", 0)] == Entry(Span(12, 1, 12, 14), None)
    assert spans[("bin", 2, "extra", 0, "y")].value == Span(13, 5, 13, 6)
    assert ("bin", 3) not in spans


def test_crlf_line_endings() -> None:
    text = (
        "[package]\r\n"
        'name = "demo" # comment\r\n'
        "\r\n"
        "[dependencies]\r\n"
        "features = [\r\n"
        '  "a",\r\n'
        '  # "b",\r\n'
        '  "c",\r\n'
        "]\r\n"
        'desc = """\r\n'
        "two\r\n"
        'lines"""\r\n'
        "after = 1\r\n"
    )
    spans = index_spans(text)
    assert spans[("package", "name")] == Entry(Span(2, 1, 2, 5), Span(2, 8, 2, 14))
    assert spans[("dependencies",)].key == Span(4, 2, 4, 14)
    features = ("dependencies", "features")
    assert spans[features].value == Span(5, 12, 9, 2)
    assert spans[_p(*features, 1)].key == Span(8, 3, 8, 6)
    assert spans[("dependencies", "desc")].value == Span(10, 8, 12, 9)
    assert _at(text, _value(spans, ("dependencies", "desc"))) == ('"""\r\ntwo\r\nlines"""')
    assert spans[("dependencies", "after")] == Entry(Span(13, 1, 13, 6), Span(13, 9, 13, 10))


def test_unicode_before_a_key_counts_code_points() -> None:
    text = (
        "[package]\n"
        'authors = ["Zoë Ünïcødé 🦀"]\n'
        '"crate-名前" = { "ключ" = "значение 🦀", version = "1" }\n'
    )
    spans = index_spans(text)
    assert spans[("package", "authors", 0)].key == Span(2, 12, 2, 27)
    table = ("package", "crate-名前")
    assert spans[table].key == Span(3, 1, 3, 11)
    assert spans[_p(*table, "ключ")] == Entry(Span(3, 16, 3, 22), Span(3, 25, 3, 37))
    assert _at(text, _value(spans, (*table, "ключ"))) == '"значение 🦀"'
    # One code point per character, even outside the BMP.
    assert spans[_p(*table, "version")] == Entry(Span(3, 39, 3, 46), Span(3, 49, 3, 52))


def test_byte_order_mark_is_not_counted() -> None:
    text = '\ufeffname = "x"\n[lib]\npath = "lib.rs"\n'
    spans = index_spans(text)
    assert spans[("name",)] == Entry(Span(1, 1, 1, 5), Span(1, 8, 1, 11))
    assert spans[("lib",)].key == Span(2, 2, 2, 5)


def test_multiline_strings() -> None:
    text = (
        'a = """\n'
        "first # not a comment\n"
        'has "quotes" and \\"escapes\\" and \\\n'
        '   ["brackets"]"""\n'
        "b = '''\n"
        "literal \\ with 'quotes'\n"
        "'''\n"
        'c = """ends with two quotes"""""\n'
        "d = '''x''''\n"
        "e = 'single literal \\'\n"
        'f = "basic \\" escaped"\n'
    )
    spans = index_spans(text)
    assert spans[("a",)].value == Span(1, 5, 4, 19)
    assert spans[("b",)].value == Span(5, 5, 7, 4)
    assert spans[("c",)].value == Span(8, 5, 8, 33)
    assert spans[("d",)].value == Span(9, 5, 9, 13)
    assert spans[("e",)].value == Span(10, 5, 10, 23)
    assert spans[("f",)].value == Span(11, 5, 11, 23)
    for path in [("a",), ("b",), ("c",), ("d",), ("e",), ("f",)]:
        snippet = _at(text, _value(spans, path))
        assert tomlkit.parse("x = " + snippet)["x"] == tomlkit.parse(text)[path[0]]


def test_tabs_indentation_and_spaced_dots() -> None:
    text = (
        "[ dependencies . burn ]\n\tversion\t=\t'1'\n    a . b . c = 1\n  \"quoted\" . bare = 2\n"
    )
    spans = index_spans(text)
    burn = ("dependencies", "burn")
    assert spans[("dependencies",)].key == Span(1, 3, 1, 15)
    assert spans[burn].key == Span(1, 18, 1, 22)
    assert spans[_p(*burn, "version")] == Entry(Span(2, 2, 2, 9), Span(2, 12, 2, 15))
    assert spans[_p(*burn, "a")] == Entry(Span(3, 5, 3, 6), None)
    assert spans[_p(*burn, "a", "b")] == Entry(Span(3, 9, 3, 10), None)
    assert spans[_p(*burn, "a", "b", "c")] == Entry(Span(3, 13, 3, 14), Span(3, 17, 3, 18))
    assert spans[_p(*burn, "quoted")] == Entry(Span(4, 3, 4, 11), None)
    assert spans[_p(*burn, "quoted", "bare")].key == Span(4, 14, 4, 18)


def test_comments_everywhere() -> None:
    text = (
        "# leading comment [not.a.table]\n"
        "[package] # after header\n"
        "  # indented comment with key = 1\n"
        'name = "x"# no space\n'
        "list = [ # after bracket\n"
        "  1, # after item\n"
        "  # between = items\n"
        "  2 # before comma\n"
        "  , 3, # trailing comma\n"
        "] # after array\n"
        "# final comment without newline"
    )
    spans = index_spans(text)
    assert set(spans) == {
        ("package",),
        ("package", "name"),
        ("package", "list"),
        ("package", "list", 0),
        ("package", "list", 1),
        ("package", "list", 2),
    }
    assert spans[("package", "name")].value == Span(4, 8, 4, 11)
    assert spans[("package", "list", 1)].key == Span(8, 3, 8, 4)
    assert spans[("package", "list", 2)].key == Span(9, 5, 9, 6)
    assert spans[("package", "list")].value == Span(5, 8, 10, 2)


def test_inline_tables_nested_in_arrays() -> None:
    text = (
        "[package.metadata]\n"
        "targets = [\n"
        '  { name = "a", opts = { fast = true } },\n'
        '  { name = "b", list = [[1, 2], []] },\n'
        "]\n"
    )
    spans = index_spans(text)
    targets = ("package", "metadata", "targets")
    assert spans[_p(*targets, 0)] == Entry(Span(3, 3, 3, 41), Span(3, 3, 3, 41))
    assert spans[_p(*targets, 0, "name")].value == Span(3, 12, 3, 15)
    assert spans[_p(*targets, 0, "opts", "fast")] == Entry(Span(3, 26, 3, 30), Span(3, 33, 3, 37))
    assert spans[_p(*targets, 1, "list")].value == Span(4, 24, 4, 36)
    assert spans[_p(*targets, 1, "list", 0, 1)].key == Span(4, 29, 4, 30)
    assert spans[_p(*targets, 1, "list", 1)].key == Span(4, 33, 4, 35)


def test_numbers_dates_and_booleans() -> None:
    text = (
        "int = -1_000\n"
        "hex = 0xDEAD_beef\n"
        "flt = +6.626e-34\n"
        "inf = -inf\n"
        "nan = nan\n"
        "yes = true\n"
        "odt = 1979-05-27T07:32:00.999-07:00\n"
        "spc = 1979-05-27 07:32:00Z # space separated\n"
        "day = 1979-05-27 # just a date\n"
        "tim = 07:32:00\n"
        "arr = [1979-05-27, 1979-05-27 00:00:00, false]\n"
    )
    spans = index_spans(text)
    document = tomlkit.parse(text)
    for path, entry in spans.items():
        assert entry.value is not None
        snippet = _at(text, entry.value)
        expected = document[str(path[0])]
        if len(path) == 2:
            expected = expected[path[1]]
        assert str(tomlkit.parse("x = " + snippet)["x"]) == str(expected), path
    assert spans[("spc",)].value == Span(8, 7, 8, 27)
    assert spans[("day",)].value == Span(9, 7, 9, 17)
    assert spans[("arr", 1)].value == Span(11, 20, 11, 39)


def test_first_appearance_wins() -> None:
    text = "[a.b]\nx = 1\n[a]\ny = 2\n[c]\nd.e = 1\nd.f = 2\n"
    spans = index_spans(text)
    assert spans[("a",)] == Entry(Span(1, 2, 1, 3), None)
    assert spans[("a", "y")].key == Span(4, 1, 4, 2)
    assert spans[("c", "d")] == Entry(Span(6, 1, 6, 2), None)
    assert spans[("c", "d", "f")].key == Span(7, 3, 7, 4)


def test_key_escapes_are_decoded() -> None:
    text = '"caf\\u00e9" = 1\n"tab\\there" = 2\n"\\U0001F980\\x41\\e" = 3\n\'raw\\t\' = 4\n'
    spans = index_spans(text)
    assert set(spans) == {("café",), ("tab\there",), ("🦀A\x1b",), ("raw\\t",)}
    assert spans[("café",)].key == Span(1, 1, 1, 12)


def test_document_order() -> None:
    text = "[a]\nb = { c = [1, { d = 2 }] }\n"
    assert list(index_spans(text)) == [
        ("a",),
        ("a", "b"),
        ("a", "b", "c"),
        ("a", "b", "c", 0),
        ("a", "b", "c", 1),
        ("a", "b", "c", 1, "d"),
    ]


def test_empty_documents() -> None:
    assert index_spans("") == {}
    assert index_spans("\ufeff") == {}
    assert index_spans("\n\n# only a comment\r\n  \t\n") == {}


# -- invalid input -----------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "a",
        "a =",
        "a = \n",
        'a = "unterminated\n"',
        "a = 'unterminated\n'",
        'a = """never closed',
        "a = '''never closed",
        "a = [1, 2",
        "a = [1 2]",
        "a = { b = 1",
        "a = { b = 1 c = 2 }",
        "a = 1 b = 2",
        "[a",
        "[[a]",
        "[]",
        "= 1",
        "a.=1",
        '"bad \\q escape" = 1',
        '"short \\u12" = 1',
        '"surrogate \\uD800" = 1',
        '"too big \\U00110000" = 1',
        "a = @",
        '"""multi-line""" = 1',
        "'''multi-line''' = 1",
        "a = " + "[" * 100_000,
        "a = " + "{b = " * 100_000,
        '"\\',
        'a = "x\\',
    ],
)
def test_invalid_input_raises_value_error(text: str) -> None:
    with pytest.raises(ValueError, match=r"^line \d+, column \d+: "):
        index_spans(text)


_MANIFEST = """\
[package]
name = "demo"   # the crate
version = "0.1.0"
edition = "2021"
description = \"\"\"
Multi "line"
\"\"\"

[dependencies]
burn = { version = "0.16", default-features = false, features = ["std"] }
serde.workspace = true
nn = { package = "burn", optional = true }

[dependencies.tokio]
version = "1"
features = [
    "rt",
    # "macros",
    'net',
]

[target.'cfg(unix)'.dependencies]
libc = "0.2"

[[bin]]
name = "demo"
path = "src/main.rs"

[features]
default = ["std"]
std = ["burn/std", "dep:nn"]
when = 1979-05-27 07:32:00Z
"""


def test_every_truncation_only_raises_value_error() -> None:
    for end in range(len(_MANIFEST) + 1):
        with contextlib.suppress(ValueError):
            index_spans(_MANIFEST[:end])


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("[]{}\"'=.,#\\\n\r\t ab1-:_TZ"), max_size=60))
def test_arbitrary_text_only_raises_value_error(text: str) -> None:
    with contextlib.suppress(ValueError):
        index_spans(text)


# -- speed -------------------------------------------------------------------


def _manifest(dependencies: int) -> str:
    lines = ["[package]", 'name = "demo"', 'version = "0.1.0"', "", "[dependencies]"]
    for i in range(dependencies):
        lines.append(
            f'dep{i} = {{ version = "1.{i}", default-features = false, '
            f'features = ["std", "f{i}"] }}  # pinned'
        )
    lines += ["", "[features]"]
    for i in range(dependencies + dependencies // 4):
        lines.append(f'feat{i} = ["dep{i % dependencies}/std", "dep:dep{i % dependencies}"]')
    return "\n".join(lines) + "\n"


def _best_of_three(text: str) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        index_spans(text)
        best = min(best, time.perf_counter() - start)
    return best


def test_the_span_index_grows_linearly_with_the_manifest() -> None:
    """One pass over the text: a manifest 50 times longer takes about 50 times as long, never
    the 2,500 times a scan that goes back over what it read would. A ratio of two timings
    taken side by side, so a slow or busy machine slows both (the speed itself is ~1 ms per
    hundred lines, which no test asserts)."""
    small, large = _manifest(40), _manifest(2000)
    assert len(index_spans(small)) > 300
    assert _best_of_three(large) < 500 * _best_of_three(small)


# -- property: spans agree with what tomlkit writes ---------------------------

_scalars = st.one_of(
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.booleans(),
    st.floats(allow_nan=False),
    st.text(max_size=8),
)
_keys = st.text(max_size=6)
_documents = st.dictionaries(
    _keys,
    st.recursive(
        _scalars | st.lists(_scalars, max_size=3),
        lambda children: st.one_of(
            st.dictionaries(_keys, children, max_size=3),
            st.lists(st.dictionaries(_keys, children, max_size=3), max_size=2),
            st.lists(children, max_size=3),
        ),
        max_leaves=8,
    ),
    max_size=4,
)


def _leaves(value: Any, path: KeyPath = ()) -> Iterator[tuple[KeyPath, Any]]:
    """Every key path holding a scalar, or an array holding no tables."""
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _leaves(child, (*path, key))
    elif isinstance(value, list):
        if not any(isinstance(item, dict) for item in value):
            yield path, value
        for index, item in enumerate(value):
            yield from _leaves(item, (*path, index))
    else:
        yield path, value


def _paths(value: Any, path: KeyPath = ()) -> Iterator[KeyPath]:
    """Every key path in a plain-data document."""
    children = value.items() if isinstance(value, dict) else enumerate(value)
    for key, child in children:
        yield (*path, key)
        if isinstance(child, (dict, list)):
            yield from _paths(child, (*path, key))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_documents)
def test_spans_match_tomlkit_output(data: dict[str, Any]) -> None:
    text = tomlkit.dumps(data)
    spans = index_spans(text)
    assert set(spans) == set(_paths(data))
    for path, value in _leaves(data):
        entry = spans[path]
        last = path[-1]
        if isinstance(last, str):
            assert _at(text, entry.key) == tomlkit.key(last).as_string()
        else:
            assert entry.key == entry.value
        assert entry.value is not None
        snippet = _at(text, entry.value)
        assert tomlkit.parse("x = " + snippet).unwrap()["x"] == value
