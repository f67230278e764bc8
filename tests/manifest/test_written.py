"""Each declaration of the model bound to the lines that write it (`written_in`), in every shape
cargo accepts, the way cargo's metadata lists the declarations."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from featcheck.manifest.declarations import written_in
from featcheck.manifest.document import parse_text
from featcheck.workspace.cargo_metadata import declaration

ROOT = """\
[workspace]
members = ["app"]

[workspace.dependencies]
burn = { version = "0.22", package = "burn-core", default-features = false }
"""

MEMBER = """\
[package]
name = "app"
version = "0.1.0"

[dependencies]
burn = { workspace = true, features = ["std"] }
nn = { package = "burn-nn", version = "1" }
serde.version = "1"
serde.features = ["derive"]

[dependencies.rayon]
version = "1.10"

[dev-dependencies]
burn = { workspace = true }

[target.'cfg(unix)'.dependencies]
libc = "0.2"

[target."cfg(windows)".dependencies]
libc = { version = "0.2" }
"""


def _declaration(name: str, **fields: Any) -> Any:
    """A declaration as `cargo metadata` lists it."""
    return declaration({"name": name, "req": "*", "kind": None, **fields})


def _lines(found: list[Any]) -> list[tuple[str, int]]:
    return [
        ("/".join(map(str, site.path)), site.manifest.spans.get(site.path).key.line)
        for site in found
    ]


def test_each_declaration_is_bound_to_the_lines_that_write_it() -> None:
    root = parse_text(Path("/ws/Cargo.toml"), ROOT)
    member = parse_text(Path("/ws/app/Cargo.toml"), MEMBER)
    inherited = _declaration("burn-core", rename="burn", req="^0.22", features=["std"])
    renamed = _declaration("burn-nn", rename="nn", req="^1")
    dotted = _declaration("serde", req="^1", features=["derive"])
    table = _declaration("rayon", req="^1.10")
    dev = _declaration("burn-core", rename="burn", req="^0.22", kind="dev")
    # cargo writes a cfg its own way (`cfg(unix)` stays, `cfg(target_os="linux")` gains spaces):
    # which `[target.X]` table is left to the target's cfg, as before.
    unix = _declaration("libc", req="^0.2", target="cfg(unix)")
    windows = _declaration("libc", req="^0.2", target="cfg(windows)")
    declarations = (inherited, renamed, dotted, table, dev, unix, windows)

    written = written_in(member, declarations, root)

    assert _lines(written.of[inherited]) == [("dependencies/burn", 6)]
    assert written.of[inherited][0].inherited is not None
    assert written.of[inherited][0].inherited.disables_defaults()
    assert _lines(written.of[renamed]) == [("dependencies/nn", 7)]
    assert _lines(written.of[dotted]) == [("dependencies/serde", 8)]
    assert _lines(written.of[table]) == [("dependencies/rayon", 11)]
    assert _lines(written.of[dev]) == [("dev-dependencies/burn", 15)]
    both = [
        ("target/cfg(unix)/dependencies/libc", 18),
        ("target/cfg(windows)/dependencies/libc", 21),
    ]
    assert _lines(written.of[unix]) == _lines(written.of[windows]) == both
    # Every line: kind by kind, each kind's plain tables before its `[target.X]` tables.
    keys = [site.key for site in written.sites]
    assert keys == ["burn", "nn", "serde", "rayon", "libc", "libc", "burn"]


def test_a_declaration_the_manifest_does_not_write_is_bound_to_nothing() -> None:
    member = parse_text(Path("/ws/app/Cargo.toml"), MEMBER)
    absent = _declaration("tokio", req="^1")
    written = written_in(member, (absent,), None)
    assert written.of[absent] == []
    # Without the workspace root, `burn = { workspace = true }` names the package by its key.
    assert [site.package for site in written.sites][:2] == ["burn", "burn-nn"]
