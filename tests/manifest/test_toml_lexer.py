"""Tests for featcheck.manifest.toml_lexer: where strings end and comments start."""

from __future__ import annotations

import pytest

from featcheck.manifest.toml_lexer import Comment, LexError, scan_comments, string_end


def test_scanner_skips_hashes_inside_every_kind_of_string() -> None:
    text = (
        '"# key" = "a # b"  # one\n'
        "lit = 'c # d' # two\n"
        'esc = "quote \\" # still string" # three\n'
        'ml = """\nline # in string\n"""  # four\n'
        "mll = '''\n# in literal\n''' # five\n"
        'odd = """ends with quote""""  # six\n'
        "# seven\n"
    )
    comments = scan_comments(text)
    assert [c.text for c in comments] == [
        "# one",
        "# two",
        "# three",
        "# four",
        "# five",
        "# six",
        "# seven",
    ]
    assert comments[0] == Comment(1, 20, "# one")
    assert comments[3].line == 6 and comments[4].line == 9


def test_scanner_columns_ignore_a_byte_order_mark_and_crlf() -> None:
    comments = scan_comments('\ufeffa = 1 # x\r\nb = "#" # y\r\n')
    assert comments == [Comment(1, 7, "# x"), Comment(2, 9, "# y")]


@pytest.mark.parametrize(
    ("text", "offset", "stop"),
    [('"abc\nd', 4, 4), ('"""abc', 0, 6), ("'abc\nd'", 0, 4), ("'''abc", 0, 6)],
)
def test_a_string_that_does_not_end(text: str, offset: int, stop: int) -> None:
    with pytest.raises(LexError) as caught:
        string_end(text, 0)
    assert (caught.value.offset, caught.value.stop) == (offset, stop)


def test_for_comments_an_unterminated_string_ends_with_its_line() -> None:
    assert scan_comments("a = 'x # no\n# yes\n") == [Comment(2, 1, "# yes")]
