"""The records of the workspace model: a package, a declaration in its manifest, a resolved
edge bound to the declaration behind it, the edits a candidate fix makes to them, and crate
names as crates.io compares them."""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field
from enum import Enum
from functools import cache
from pathlib import Path
from typing import NamedTuple

CRATES_IO = "registry+https://github.com/rust-lang/crates.io-index"
"""The `source` cargo writes for a crates.io package, in Cargo.lock and its metadata."""
CRATES_IO_SPARSE = "sparse+https://index.crates.io/"
"""The sparse index of crates.io, which cargo reads by default."""

_FINAL_ARTIFACTS = frozenset({"bin", "cdylib", "staticlib"})
"""Target kinds that are built for someone to run or load, not to depend on."""


def gated_binary(required: object) -> frozenset[str] | None:
    """A binary's `required-features` as `Package.gated_binaries` keeps them; None for one
    built whatever the features: it names none, or one of a dependency (`dep/feature`), which
    is not followed here, so the binary counts as built (a warning rather than an info)."""
    if not isinstance(required, list) or not required:
        return None
    names = frozenset(str(feature) for feature in required)
    return None if any("/" in name for name in names) else names


LIBRARY_KINDS = frozenset({"lib", "rlib", "dylib", "cdylib", "staticlib", "proc-macro"})
"""Target kinds of a library: a package with one is a crate others can link."""

COMPILED_KINDS = LIBRARY_KINDS | {"bin"}
"""Target kinds of a normal build (not examples, tests, benches or the build script)."""


class DependencyKind(Enum):
    """The table a dependency is declared in."""

    NORMAL = "normal"
    DEV = "dev"
    BUILD = "build"

    @classmethod
    def of(cls, kind: str | None) -> DependencyKind:
        """The kind as `cargo metadata` writes it (`null` for a normal dependency). Looked up
        in a table first: asked for every declaration and edge of the metadata, the enum's
        own lookup took a tenth of reading a package; anything else raises as it does."""
        found = _KINDS.get(kind) if kind is None or isinstance(kind, str) else None
        return cls(kind or "normal") if found is None else found


_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
"""A URL's scheme (`https://`, `git+ssh://`, `file://`): no path package's source has one."""
_KINDS: dict[str | None, DependencyKind] = {None: DependencyKind.NORMAL}
_KINDS.update((kind.value, kind) for kind in DependencyKind)
NORMAL = DependencyKind.NORMAL
DEV = DependencyKind.DEV
BUILD = DependencyKind.BUILD


@dataclass(frozen=True, order=True)
class PackageRef:
    """A package as cargo tree names it: name, version and, for non-registry packages, source."""

    name: str
    version: str
    source: str | None = None
    """A local path or git URL as printed by `{p}`; None for registry packages."""
    id: str | None = field(default=None, compare=False)
    """cargo's package id when the graph came from metadata (None for saved tree text): what
    every later step uses to find the package again, never name and version."""

    @property
    def is_local(self) -> bool:
        """True for path packages: workspace members and path dependencies the user owns. cargo
        shows their source as a directory; a git source as its URL (`file://` too, a repository
        on this machine), another registry's as "registry `URL`"."""
        source = self.source
        return (
            source is not None
            and _URL.match(source) is None
            and not source.startswith("registry `")
        )

    def __str__(self) -> str:
        return f"{self.name} v{self.version}"


@dataclass(frozen=True, slots=True)
class Declaration:
    """One entry of a package's dependency tables, as cargo normalised it. (With slots: one is
    made for every entry of every package read, and setting the fields of one without them
    took a third longer.)"""

    name: str
    """The depended-on package's real name (after `package = ...` renames)."""
    rename: str | None
    """The key the manifest uses when it differs from the package name."""
    req: str
    """The version requirement, e.g. `=0.22.1` or `^1`."""
    kind: DependencyKind
    target: str | None
    """`cfg(...)` expression or target triple of a `[target.X]` table; None if unconditional."""
    optional: bool
    uses_default_features: bool
    features: tuple[str, ...]
    path: str | None
    """Absolute directory of a path dependency."""

    @property
    def key(self) -> str:
        return self.rename or self.name


class Edge(NamedTuple):
    """One declaration of a dependency, bound to the package it resolved to."""

    dep: int
    """Index of the depended-on package."""
    name_in_toml: str
    """The manifest key (the rename, if any): what `dep:x` and `x/feat` refer to."""
    kind: DependencyKind
    platform: str | None
    optional: bool
    requested: tuple[FeatureValue, ...]
    """What this declaration turns on in `dep` (cargo's `fvs_from_dependency`)."""
    declaration: Declaration | None = None
    """The declaration behind the edge; None for one a counterfactual edit adds."""


class CrateRoot(NamedTuple):
    """The file rustc compiles first for one of a package's libraries or binaries."""

    path: Path
    required: frozenset[str] = frozenset()
    """A binary's `required-features`: it is built only where all of them are on."""


@dataclass(frozen=True, eq=False, slots=True)
class Package:
    """Compared by identity: the workspace holds one record per package."""

    index: int
    """Position in the workspace's package table: what graph keys and edges use."""
    id: str
    """cargo's package ID spec, usable with `cargo tree -p`."""
    ref: PackageRef
    manifest_path: Path
    target_kinds: frozenset[str]
    proc_macro: bool
    features: dict[str, tuple[FeatureValue, ...]]
    declarations: tuple[Declaration, ...]
    edges: tuple[Edge, ...] = ()
    """Each bound to its declaration; empty for a package nothing in any build depends on."""
    unresolved: frozenset[str] = frozenset()
    """Keys of normal and build dependencies with a declaration the resolve binds no package
    to: optional ones nothing in the workspace turns on (beside, perhaps, a `[target.X]` line
    of the same key that it does), so Cargo.lock does not say which version they get."""
    gated_binaries: tuple[frozenset[str], ...] = ()
    """The `required-features` of each binary that names some (not in `target_kinds`): cargo
    builds it only where all of them are on, and skips it silently elsewhere."""
    crate_roots: tuple[CrateRoot, ...] = ()
    """Its libraries' and binaries' (a local package's; manifest/crate_root.py reads them)."""

    @property
    def name(self) -> str:
        return self.ref.name

    @property
    def version(self) -> str:
        return self.ref.version

    def implied(self, feature: str) -> set[str]:
        """`feature` and the features of the package it turns on, through its feature table."""
        found, waiting = {feature}, [feature]
        while waiting:
            for value in self.features.get(waiting.pop(), ()):
                if value.kind == FEATURE and value.name not in found:
                    found.add(value.name)
                    waiting.append(value.name)
        return found

    def is_library_only(self, features: Collection[str]) -> bool:
        """True when the package's build with `features` on makes no final artifact (a binary,
        or a `cdylib`/`staticlib` such as a Python extension, a wasm module or a C library):
        its features are chosen by the packages that depend on it. Examples and tests do not
        count: nobody ships them. Nor does a binary whose `required-features` are off (arrow's
        parquet: its tools need `cli`)."""
        if self.target_kinds & _FINAL_ARTIFACTS:
            return False
        return not any(required <= set(features) for required in self.gated_binaries)


# Edits of the model: what a candidate fix changes in the declarations, applied to the
# model itself so the resolver can run again without cargo (fixes/counterfactual.py).


@dataclass(frozen=True)
class MoreFeatures:
    """A declaration asks for more: `features` added, or `default` once defaults stay on."""

    package: int
    """Index of the declaring package."""
    key: str
    """The dependency's key in the manifest (the rename, if any)."""
    kind: DependencyKind
    platform: str | None
    """The `[target.X]` table it sits in; None for the plain tables."""
    features: tuple[str, ...] = ()
    defaults: bool = False
    """True when the edit removes `default-features = false`."""


@dataclass(frozen=True)
class NewDependency:
    """A new `[dependencies]` entry of `package` on the package `dep`."""

    package: int
    dep: int
    key: str
    features: tuple[str, ...]
    """What the entry asks of `dep` (`default` among them when it keeps the defaults)."""
    behind: str | None = None
    """The package's own feature that turns the entry on (`dep:KEY` added to it); None: required."""
    platform: str | None = None
    """The `[target.PLATFORM.dependencies]` table it is written in; None: `[dependencies]`."""


@dataclass(frozen=True)
class MoreFeatureValues:
    """Values added to one of the package's own features (`std = [..., "ndarray?/x"]`)."""

    package: int
    feature: str
    values: tuple[str, ...]


ModelEdit = MoreFeatures | NewDependency | MoreFeatureValues


# Feature values: the strings of a `[features]` table or a dependency's `features` list.
#
# cargo reads each string into one of three shapes (`FeatureValue::new` in cargo): a plain feature
# of the same package (`std`), an optional dependency (`dep:rayon`), or a feature of a dependency
# (`gemm/rayon`, or the weak `gemm?/rayon` that never turns the dependency on by itself).

FEATURE = 0
"""`name`: another feature of the same package."""
DEP = 1
"""`dep:name`: turn on the optional dependency declared as `name`."""
DEP_FEATURE = 2
"""`name/feature` or `name?/feature`: a feature of the dependency declared as `name`."""


class FeatureValue(NamedTuple):
    """One parsed feature string; tuples keep the resolver's hot loop cheap."""

    kind: int
    name: str
    """The feature name (FEATURE) or the dependency's name in the manifest (DEP, DEP_FEATURE)."""
    dep_feature: str = ""
    """The dependency's feature (DEP_FEATURE only)."""
    weak: bool = False
    """True for `name?/feature` (DEP_FEATURE only)."""


@cache
def parse_feature_value(text: str) -> FeatureValue:
    """Read one feature string exactly as cargo's `FeatureValue::new` does."""
    dep_name, slash, dep_feature = text.partition("/")
    if slash:
        weak = dep_name.endswith("?")
        return FeatureValue(DEP_FEATURE, dep_name.removesuffix("?"), dep_feature, weak)
    if text.startswith("dep:"):
        return FeatureValue(DEP, text[len("dep:") :])
    return FeatureValue(FEATURE, text)


def parse_feature_values(texts: list[str] | tuple[str, ...]) -> tuple[FeatureValue, ...]:
    """Read a list of feature strings (`map` over the cached reader: an audit reads the
    `[features]` of every package it visits)."""
    return tuple(map(parse_feature_value, texts))


# Crate names as crates.io compares them.
#
# crates.io treats `-` and `_` as the same character and ignores case: it refuses `parking-lot`
# next to `parking_lot`, so a name written either way means one crate. Cargo itself knows a
# package only by its own spelling (the one in its manifest). So featcheck compares every name a
# user or a rule writes (rule specs, `-p`, suppressions) with `crate_key`, and prints the name
# cargo prints.


@cache
def crate_key(name: str) -> str:
    """Cached: the rules and the fix search compare every package of every build they see."""
    return name.replace("_", "-").lower()


def crate_family(name: str) -> str:
    """The family of a crate: `burn` for burn-flex."""
    return crate_key(name).split("-", 1)[0]


def same_crate(written: str, name: str) -> bool:
    """Whether `written` (by a user or a rule) names the crate cargo calls `name`."""
    return crate_key(written) == crate_key(name)


def extern_name(name: str) -> str:
    """The name Rust code uses for a crate or a renamed dependency: `-` written as `_`."""
    return name.replace("-", "_")
