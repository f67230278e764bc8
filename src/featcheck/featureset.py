"""What an audit is asked to do (`AuditOptions`, which a caller, the command line, sets), and its
build configurations: cargo's feature selection flags (`--features`, `--all-features`,
`--no-default-features`) as one value that travels from the command line or the configuration
file through resolution to each finding.

Feature names are checked against cargo's grammar here, once, so that nothing a checkout or a
command line supplies reaches cargo as an option: a valid name never starts with `-` or `@`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from featcheck.cargo.command_setup import CommandSetup
    from featcheck.cargo.toolchain import Toolchain
    from featcheck.workspace.model import Package

_SEPARATORS = re.compile(r"[\s,]+")


def feature_name_error(name: str) -> str | None:
    """Why `name` is not a feature name cargo accepts (cargo's `validate_feature_name`)."""
    if not name:
        return "a feature name cannot be empty"
    if not (name[0].isidentifier() or name[0].isdigit()):  # XID_Start, `_` or a digit
        return (
            f"invalid character `{name[0]}` in feature `{name}`: the first character must be a "
            "letter, a digit or `_`"
        )
    for char in name[1:]:
        if not (("a" + char).isidentifier() or char in "-+."):  # XID_Continue or `-+.`
            return (
                f"invalid character `{char}` in feature `{name}`: use letters, digits, "
                "`_`, `-`, `+` or `.`"
            )
    return None


def feature_value_error(value: str) -> str | None:
    """Why `value` is not what `--features` accepts: `feature`, `package/feature` or
    `package?/feature` (cargo refuses `dep:` there)."""
    if value.startswith("dep:"):
        return f"feature `{value}` is not allowed to use explicit `dep:` syntax"
    package, slash, feature = value.partition("/")
    if not slash:
        return feature_name_error(value)
    return feature_name_error(package.removesuffix("?")) or feature_name_error(feature)


def parse_features(texts: Iterable[str]) -> tuple[str, ...]:
    """`--features "a b,c" --features d` -> ("a", "b", "c", "d"), as cargo splits them;
    ValueError naming the first value cargo would not accept."""
    found = [value for text in texts for value in _SEPARATORS.split(text) if value]
    for value in found:
        error = feature_value_error(value)
        if error is not None:
            raise ValueError(error)
    return tuple(dict.fromkeys(found))


# A NamedTuple, not a dataclass: made before cargo starts (see audit.py).
class FeatureSelection(NamedTuple):
    """What cargo's feature selection flags ask of one selected package. `features` may hold
    `feature`, `package/feature` and `package?/feature` values (validated, sorted, without
    duplicates: build them with `FeatureSelection.of`)."""

    features: tuple[str, ...] = ()
    no_default_features: bool = False
    all_features: bool = False

    @classmethod
    def of(
        cls, features: Iterable[str] = (), *, no_default: bool = False, all_features: bool = False
    ) -> FeatureSelection:
        return cls(tuple(sorted(parse_features(features))), no_default, all_features)

    @property
    def is_default(self) -> bool:
        return self == DEFAULT

    def cargo_args(self) -> list[str]:
        """The flags for cargo: one `--features=a,b` argument; names were validated."""
        args: list[str] = []
        if self.features:
            args.append("--features=" + ",".join(self.features))
        if self.no_default_features:
            args.append("--no-default-features")
        if self.all_features:
            args.append("--all-features")
        return args

    @property
    def label(self) -> str:
        """How reports name it: the cargo flags, or `default features`."""
        return " ".join(self.cargo_args()).replace("--features=", "--features ") or (
            "default features"
        )

    def to_json(self) -> dict[str, Any]:
        """The JSON form (README, "JSON output")."""
        return {
            "features": list(self.features),
            "no_default_features": self.no_default_features,
            "all_features": self.all_features,
        }


DEFAULT = FeatureSelection()
"""No flags: what `cargo build -p MEMBER` builds."""


def each_feature(base: FeatureSelection, features: Iterable[str]) -> list[FeatureSelection]:
    """`--each-feature`, as cargo-hack runs it: the base flags with the defaults, without any
    feature, then each feature on its own (`--no-default-features --features F`), `base`'s
    features added to every one. `default` is not listed on its own: it is the first one."""
    alone = FeatureSelection(base.features, no_default_features=True)
    found = [base, alone]
    found += [
        FeatureSelection(tuple(sorted({*base.features, name})), no_default_features=True)
        for name in sorted(features)
        if name != "default"
    ]
    return list(dict.fromkeys(found))


def member_selection(
    selection: FeatureSelection, package: Package
) -> tuple[FeatureSelection, tuple[str, ...]]:
    """The flags cargo applies to one selected workspace member (resolver 2 and 3, or a virtual
    workspace: cargo's `collect_matching_features`), and the features it does not have. A plain
    feature counts when the member defines it (implicit features of optional dependencies
    included); `dep/feature` when it declares a dependency `dep`; `member/feature` when
    `member` names it and it defines `feature` (then plain)."""
    defined = set(package.features)
    dependencies = {decl.key: decl.optional for decl in package.declarations}
    defined |= {name for name, optional in dependencies.items() if optional}
    kept: list[str] = []
    missing: list[str] = []
    for value in selection.features:
        owner, slash, feature = value.partition("/")
        if not slash:
            (kept if value in defined else missing).append(value)
        elif owner.removesuffix("?") in dependencies:
            kept.append(value)
        elif owner.removesuffix("?") == package.name and feature in defined:
            kept.append(feature)
        else:
            missing.append(value)
    applied = FeatureSelection(
        tuple(sorted(set(kept))), selection.no_default_features, selection.all_features
    )
    return applied, tuple(missing)


def unmatched(selection: FeatureSelection, packages: Sequence[Package]) -> str | None:
    """cargo's error for the features of `selection` that none of the selected members has."""
    missing = set(selection.features).intersection(
        *(member_selection(selection, package)[1] for package in packages)
    )
    if not missing:
        return None
    listed, names = ", ".join(sorted(missing)), [p.name for p in packages]
    these = "this feature" if len(missing) == 1 else "these features"
    if len(names) == 1:
        return f"the package '{names[0]}' does not contain {these}: {listed}"
    return (
        f"none of the selected packages contains {these}: {listed} "
        f"(selected packages: {', '.join(names)})"
    )


# A NamedTuple, not a dataclass: made before cargo starts (see audit.py).
class AuditOptions(NamedTuple):
    """What to audit and how to call cargo."""

    packages: tuple[str, ...] = ()
    """Members to audit (`-p`); empty means every member the path selects."""
    targets: tuple[str, ...] = ()
    """Target triples; empty means the host."""
    offline: bool = False
    locked: bool = False
    timeout: float = 300.0
    select: tuple[str, ...] = ()
    """Rules to run besides the defaults (codes or names), e.g. the opt-in hints."""
    ignore: tuple[str, ...] = ()
    check_new_packages: bool = True
    """Before calling a fix confirmed that turns on dependencies Cargo.lock holds no version
    of, let cargo resolve all such fixes once over a temporary copy (False: memory decides)."""
    search_fixes: bool = True
    """False: no fix is searched, and a finding points at the member's own declaration on the
    way to the crate (`--new-since`'s audit of the base revision, where only findings count)."""
    search_alternatives: bool = True
    """False: the report shows only each finding's confirmed fix (text without `-v`), so
    candidates that cannot beat it are not resolved and the alternatives are not all there
    (fixes not confirmed, `no_exec` or not `confirm_fixes`, list every candidate: keep it on)."""
    confirm_fixes: bool = True
    """Call a fix safe once featcheck's resolver, with the edits made in memory, builds the
    missing feature and leaves no finding of the crate behind (False: fixes are listed only)."""
    on_command: Callable[[list[str]], None] | None = None
    """Called with each cargo/rustc command line before it runs (the CLI's --verbose)."""
    update_lockfile: bool = False
    """Keep what cargo writes to Cargo.lock (after --fix), instead of restoring the user's."""
    no_exec: bool = False
    """Start no process: read the manifests, Cargo.lock and the dependency manifests in the
    local cargo registry or vendor/, with built-in target cfgs; no fix is confirmed safe."""
    configurations: tuple[FeatureSelection, ...] = ()
    """Feature selections to audit; empty means the configuration's, else the default features."""
    each_feature: bool = False
    """Also audit each feature of each member on its own (`--each-feature`)."""
    on_progress: Callable[[str], None] | None = None
    """Called with a short text while cargo downloads (the CLI's progress line)."""
    root: Path | None = None
    """What reported paths are relative to (`--root`); None: see `stages.finish.report_root`."""
    setup: CommandSetup | None = None
    """For a copy of the audited tree (the one `--fix` and `--diff` resolve and audit): the
    audit's cargo, toolchain, environment and configuration, so that cargo answers for the copy
    as it did for the tree (worked out in the copy's own directory, a toolchain that a rustup
    override names for the checkout's directory would be lost)."""
    toolchain: Toolchain | None = None
    """For the tree of another revision (`--new-since`), whose configuration is its own: the
    run's cargo and rustc, so that a finding differs by the manifests, not by the toolchain."""


def beyond_defaults(configurations: tuple[FeatureSelection, ...], each_feature: bool) -> bool:
    return each_feature or any(not c.is_default for c in configurations)


def without_std(package: Package, selection: FeatureSelection) -> bool:
    """Whether the package has a `std` feature and the build of it leaves that off: a no_std
    build on purpose (a library's that no_std users build)."""
    return "std" in package.features and "std" not in selected_features(package, selection)


def selected_features(package: Package, selection: FeatureSelection) -> set[str]:
    """The package's own features on in its build with `selection`'s flags (what `#[cfg(feature
    = ...)]` sees in it)."""
    if selection.all_features:
        return set(package.features)
    asked = [f for f in selection.features if "/" not in f]  # `dep/f` asks another package
    asked += [] if selection.no_default_features else ["default"]
    return {on for feature in asked for on in package.implied(feature)}
