"""Edits to manifests touch only the edited declaration: comments, quotes, order stay."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from featcheck.fixes.edits import EditError, apply_edit
from featcheck.report import Edit, edit_words

MANIFEST = Path("Cargo.toml")
SOURCE = """\
# The model crate.
[package]
name = "model"

[dependencies.burn]
version = "=0.22.1"
default-features = false  # small binary
features = [
    "std",
    "flex",   # the CPU backend
    # "rayon",
]

[dependencies]
inline = { version = "1", default-features = false, features = ['std', 'flex'] }  # keep
plain = "0.22"
dotted.version = "1"
dotted.default-features = false
bare = { version = "1", default-features = false }
no-comma = { version = "1", features = [
  "x"
] }

[dev-dependencies]
z = "1"
"""


def _diff(after: str) -> list[str]:
    return [
        line
        for line in difflib.unified_diff(SOURCE.splitlines(), after.splitlines(), lineterm="", n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]


def _edit(key: str, action: str = "add-features", *features: str) -> Edit:
    return Edit(MANIFEST, ("dependencies", key), action, features)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (
            _edit("burn", "add-features", "rayon", "simd"),
            ['+    "rayon",', '+    "simd",'],
        ),
        (
            _edit("inline", "add-features", "rayon"),
            [
                "-inline = { version = \"1\", default-features = false, features = ['std', 'flex'] }  # keep",
                "+inline = { version = \"1\", default-features = false, features = ['std', 'flex', 'rayon'] }  # keep",
            ],
        ),
        (
            _edit("plain", "add-features", "rayon"),
            ['-plain = "0.22"', '+plain = { version = "0.22", features = ["rayon"] }'],
        ),
        (_edit("dotted", "add-features", "rayon"), ['+dotted.features = ["rayon"]']),
        (
            _edit("bare", "add-features", "rayon"),
            [
                '-bare = { version = "1", default-features = false }',
                '+bare = { version = "1", default-features = false, features = ["rayon"] }',
            ],
        ),
        (_edit("no-comma", "add-features", "rayon"), ['-  "x"', '+  "x",', '+  "rayon"']),
        (
            _edit("burn", "remove-default-features"),
            ["-default-features = false  # small binary"],
        ),
        (
            _edit("inline", "remove-default-features"),
            [
                "-inline = { version = \"1\", default-features = false, features = ['std', 'flex'] }  # keep",
                "+inline = { version = \"1\", features = ['std', 'flex'] }  # keep",
            ],
        ),
        (_edit("dotted", "remove-default-features"), ["-dotted.default-features = false"]),
        (
            _edit("bare", "remove-default-features"),
            ['-bare = { version = "1", default-features = false }', '+bare = { version = "1" }'],
        ),
        (
            Edit(MANIFEST, ("dependencies", "burn-flex"), "add-dependency", ("rayon",), "=0.22.1"),
            [
                '+burn-flex = { version = "=0.22.1", default-features = false, '
                'features = ["rayon"] }'
            ],
        ),
    ],
    ids=lambda value: edit_words(value) if isinstance(value, Edit) else "",
)
def test_edit_changes_only_its_declaration(edit: Edit, expected: list[str]) -> None:
    assert _diff(apply_edit(SOURCE, edit)) == expected


def test_new_dependency_goes_at_the_end_of_the_dependencies_table() -> None:
    after = apply_edit(
        SOURCE, Edit(MANIFEST, ("dependencies", "burn-flex"), "add-dependency", ("rayon",), "=1")
    )
    lines = after.splitlines()
    index = lines.index(
        'burn-flex = { version = "=1", default-features = false, features = ["rayon"] }'
    )
    assert (
        lines[index - 1] == "] }"
        and lines[index + 1] == ""
        and lines[index + 2] == "[dev-dependencies]"
    )


def test_a_new_line_stays_above_the_comment_of_the_next_table() -> None:
    """bayesiangpu-core's wasm member: a comment right above the next `[target...]` header
    is that table's; the new line goes above it, after a commented-out line of its own table."""
    source = (
        '[dependencies]\nfoo = "1"\n# bar = "2"\n\n'
        "# Native GPU backends (non-WASM targets)\n"
        '[target.\'cfg(not(target_arch = "wasm32"))\'.dependencies]\nbaz = "1"\n'
    )
    edit = Edit(MANIFEST, ("dependencies", "qux"), "add-dependency", ("std",), "1")
    assert apply_edit(source, edit).splitlines()[:6] == [
        "[dependencies]",
        'foo = "1"',
        '# bar = "2"',
        'qux = { version = "1", default-features = false, features = ["std"] }',
        "",
        "# Native GPU backends (non-WASM targets)",
    ]


@pytest.mark.parametrize("quote", ["'", '"'])
def test_a_new_line_goes_in_the_target_table_of_the_line_that_brings_the_crate(quote: str) -> None:
    """iroh-dns: hickory-resolver, which brings uuid, is declared for non-wasm targets only; a
    line in `[dependencies]` gave the wasm32 build uuid, which refuses to compile there."""
    platform = 'cfg(not(target_arch = "wasm32"))' if quote == "'" else "cfg(unix)"
    header = f"[target.{quote}{platform}{quote}.dependencies]"
    source = f'[dependencies]\nfoo = "1"\n\n{header}\nbar = "1"\n\n[features]\nx = []\n'
    declaration = ("target", platform, "dependencies", "uuid")
    edit = Edit(MANIFEST, declaration, "add-dependency", ("fast-rng",), "1.23.4")
    lines = apply_edit(source, edit).splitlines()
    new = 'uuid = { version = "1.23.4", default-features = false, features = ["fast-rng"] }'
    assert lines[lines.index(header) + 2] == new and lines.count(new) == 1
    assert (
        edit_words(edit)
        == f"add uuid = {edit.declared_value()} to [target.'{platform}'.dependencies]"
    )


PUBLISHED = """\
[package]
name = "render"

[dependencies.png]
version = "0.18"

[dependencies.zune-jpeg]
version = "0.5"
optional = true

[dev-dependencies.png]
version = "0.18"
"""


def test_a_manifest_of_dependency_tables_gets_a_table_of_its_own() -> None:
    """Found on resvg 0.49.0 (as cargo publishes manifests, one table per dependency): the
    new line went into a `[dependencies]` appended after `[dev-dependencies.png]`."""
    edit = Edit(MANIFEST, ("dependencies", "flate2"), "add-dependency", ("zlib-rs",), "1.1.9")
    assert apply_edit(PUBLISHED, edit) == PUBLISHED.replace(
        "optional = true\n",
        'optional = true\n\n[dependencies.flate2]\nversion = "1.1.9"\n'
        'default-features = false\nfeatures = ["zlib-rs"]\n',
    )


def test_crlf_files_stay_crlf() -> None:
    source = SOURCE.replace("\n", "\r\n")
    after = apply_edit(source, _edit("burn", "add-features", "rayon"))
    assert '    "rayon",\r\n' in after
    assert "\n" not in after.replace("\r\n", "")


def test_workspace_dependency_is_edited_in_place() -> None:
    source = '[workspace]\nmembers = ["a"]\n\n[workspace.dependencies]\nburn = { version = "=0.22.1", default-features = false, features = ["std"] }\n'
    edit = Edit(MANIFEST, ("workspace", "dependencies", "burn"), "add-features", ("rayon",))
    assert apply_edit(source, edit).splitlines()[4].endswith('features = ["std", "rayon"] }')


def test_unsafe_edits_are_refused() -> None:
    with pytest.raises(EditError):
        apply_edit(SOURCE, _edit("missing", "add-features", "rayon"))
    with pytest.raises(EditError):
        apply_edit(SOURCE, _edit("plain", "remove-default-features"))
    closing = '[dependencies]\nburn = { version = "1", features = [\n  "std"] }\n'
    with pytest.raises(EditError, match="edit it by hand"):
        apply_edit(closing, _edit("burn", "add-features", "rayon"))
