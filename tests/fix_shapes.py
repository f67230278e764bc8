"""The fix shapes of tests/fixes/test_fix_shapes.py: on each fixture, where the finding points
and what its one fix edits, where walking the declarations in sorted order blamed a line whose
change fixes nothing."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Shape:
    member: str
    code: str
    crate: str
    place: str
    """file:line of the finding's location, relative to the workspace root."""
    edit: tuple[str, tuple[str, ...], str, tuple[str, ...]]
    """(file, declaration key path, action, features) of the fix's one edit."""
    built: tuple[str, ...]
    """Features real cargo must build on the crate after `--fix`."""
    members: tuple[str, ...] = ()
    """Other members whose build `--fix` must also repair."""
    also_edited: tuple[str, ...] = ()
    """Files of the fix's further edits."""


SHAPES = {
    # A path dependency that sorts first says `default-features = false`, but its defaults bring
    # nothing: the member's own burn declaration is the place.
    "shape-a-path-dep-first": Shape(
        "app",
        "FC001",
        "burn-flex",
        "Cargo.toml:9",
        ("Cargo.toml", ("dependencies", "burn"), "add-features", ("rayon", "simd")),
        ("rayon", "simd"),
    ),
    # The binary's own `default-features = false` on its path library changes nothing: the
    # workspace entry every member inherits is the cut, and one edit there fixes both members.
    "shape-b-bin-through-lib": Shape(
        "app",
        "FC001",
        "burn-flex",
        "Cargo.toml:6",
        (
            "Cargo.toml",
            ("workspace", "dependencies", "burn"),
            "add-features",
            ("rayon", "simd"),
        ),
        ("rayon", "simd"),
        ("mylib",),
    ),
    # ndarray passes `matrixmultiply-threading` on; the dependency sorting first does not.
    "shape-c-ndarray-sorted-first": Shape(
        "app",
        "FC009",
        "matrixmultiply",
        "Cargo.toml:9",
        (
            "Cargo.toml",
            ("dependencies", "ndarray"),
            "add-features",
            ("matrixmultiply-threading",),
        ),
        ("threading",),
    ),
    # `default-features = false` next to `workspace = true` is ignored by cargo; the root
    # entry is the cut. burn 0.21.0 brings rayon and simd only through its defaults, but they
    # add 44 packages to `tool`'s build (its `autodiff` with burn's defaults): the member
    # depends on burn-flex instead.
    "shape-d-workspace-repeat": Shape(
        "app",
        "FC001",
        "burn-flex",
        "Cargo.toml:6",
        ("app/Cargo.toml", ("dependencies", "burn-flex"), "add-dependency", ("rayon", "simd")),
        ("rayon", "simd"),
    ),
    # matrixmultiply is already a dependency: its own declaration gets the feature.
    "shape-e-already-a-dependency": Shape(
        "app",
        "FC009",
        "matrixmultiply",
        "Cargo.toml:9",
        ("Cargo.toml", ("dependencies", "matrixmultiply"), "add-features", ("threading",)),
        ("threading",),
    ),
    # burn 0.21.0 has no rayon passthrough: the path library's declaration loses its
    # `default-features = false`, which brings simd too (rayon alone would raise FC003).
    "shape-f-burn-021-companion": Shape(
        "app",
        "FC001",
        "burn-flex",
        "a-model/Cargo.toml:8",
        ("a-model/Cargo.toml", ("dependencies", "burn"), "remove-default-features", ()),
        ("rayon", "simd"),
    ),
    # Two binaries on a workspace library whose burn 0.21 line cuts burn-ndarray's threading
    # (no passthrough): the library owns the cut, and one new line there fixes all three
    # members, not one line per binary.
    "shape-i-library-owns-the-cut": Shape(
        "cli",
        "FC002",
        "burn-ndarray",
        "core/Cargo.toml:8",
        ("core/Cargo.toml", ("dependencies", "burn-ndarray"), "add-dependency", ("multi-threads",)),
        ("multi-threads",),
        ("api", "core-lib"),
    ),
    # burn is declared twice, and only the `[target.X]` line asks for `flex`: that line brings
    # burn-flex and takes the fix, not the plain line, which builds for wasm32 too.
    "shape-j-target-line-turns-on": Shape(
        "app",
        "FC001",
        "burn-flex",
        "Cargo.toml:11",
        (
            "Cargo.toml",
            ("target", 'cfg(not(target_arch = "wasm32"))', "dependencies", "burn"),
            "add-features",
            ("rayon", "simd"),
        ),
        ("rayon", "simd"),
    ),
    # Only a new dependency helps (tch passes nothing on), with a caret requirement.
    "shape-g-new-dependency": Shape(
        "app",
        "FC009",
        "matrixmultiply",
        "Cargo.toml:8",
        ("Cargo.toml", ("dependencies", "matrixmultiply"), "add-dependency", ("threading",)),
        ("threading",),
    ),
}
