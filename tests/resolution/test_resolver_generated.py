"""featcheck's feature resolution equals `cargo tree` on random workspaces (hypothesis).

Each example is a small workspace (a root package, sometimes a second member) over a fresh
directory-source registry of random packages: feature tables with `dep:`, `x/f`, weak `x?/f`
and implicit features, optional and renamed dependencies (two versions of one package under two
names), `[target.X]` tables for Unix, Windows and macOS, dev- and build-dependencies,
proc-macros, dev-dependency cycles, virtual or package roots, and resolver 1, 2 or 3 (set, or
implied by the edition or by a virtual root).
For every member, on the host and a cross target, `resolve_builds` must equal `cargo tree`.

The default example count suits CI (about a minute, and derandomized so CI is reproducible);
`FEATCHECK_DIFF_EXAMPLES=3000` explores that many random examples instead.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from support import cargo_environment
from test_resolver_differential import (
    CROSS_TARGETS,
    cargo_metadata,
    cargo_tree_graph,
    check_workspace,
    host_triple,
    target_cfg,
)

from featcheck.resolution import resolve_builds
from featcheck.workspace.cargo_metadata import workspace_from_metadata

_EXAMPLES = os.environ.get("FEATCHECK_DIFF_EXAMPLES")
PLATFORMS = (
    None,
    "cfg(unix)",
    "cfg(windows)",
    'cfg(target_os = "macos")',
    "cfg(not(windows))",
    "x86_64-pc-windows-msvc",
)


@dataclass
class Decl:
    """One dependency declaration (one table entry)."""

    package: str
    version: str
    name: str
    """The manifest key; differs from `package` for a rename."""
    kind: str = "normal"
    platform: str | None = None
    optional: bool = False
    default_features: bool = True
    features: list[str] = field(default_factory=list)
    path: str | None = None
    """For a workspace member, its package name (`write_example` makes it a relative path)."""


@dataclass
class Crate:
    """A package of the generated registry or workspace."""

    name: str
    version: str = "1.0.0"
    proc_macro: bool = False
    features: dict[str, list[str]] = field(default_factory=dict)
    decls: list[Decl] = field(default_factory=list)
    lib: bool = True
    """False: a member with only `src/main.rs`. cargo warns that a dependency on it is
    ignored (nothing to link), yet the features it asks for still unify."""


@dataclass
class Spec:
    """A whole generated example."""

    registry: list[Crate]
    members: list[Crate]
    """members[0] is the root package; members[1], if any, lives in `m1/`."""
    resolver: str | None
    """"1", "2" or "3"; None: implied by the root's edition."""
    edition: str = "2021"
    cross_target: str = CROSS_TARGETS[0]
    virtual: bool = False
    """True: the root manifest is `[workspace]` only and the root package lives in `app/`."""


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(value)


def _decl_line(decl: Decl, directories: dict[str, str], here: str) -> str:
    fields: dict[str, object] = {}
    if decl.path is not None:
        fields["path"] = Path(os.path.relpath(directories[decl.path], here)).as_posix()
    else:
        fields["version"] = f"={decl.version}"
    if decl.name != decl.package:
        fields["package"] = decl.package
    if decl.optional:
        fields["optional"] = True
    if not decl.default_features:
        fields["default-features"] = False
    if decl.features:
        fields["features"] = decl.features
    body = ", ".join(f"{key} = {_toml_value(value)}" for key, value in fields.items())
    return f"{json.dumps(decl.name)} = {{ {body} }}"


def manifest(
    crate: Crate, edition: str, directories: dict[str, str] | None = None, extra: str = ""
) -> str:
    """The Cargo.toml of a generated package; `directories` place the workspace members."""
    directories = directories or {}
    lines = [
        "[package]",
        f'name = "{crate.name}"',
        f'version = "{crate.version}"',
        f'edition = "{edition}"',
        extra,
    ]
    if crate.proc_macro:
        lines += ["[lib]", "proc-macro = true"]
    lines.append("[features]")
    lines += [f"{json.dumps(k)} = {_toml_value(v)}" for k, v in crate.features.items()]
    tables: dict[str, list[str]] = {}
    for decl in crate.decls:
        section = {"normal": "dependencies", "build": "build-dependencies"}.get(
            decl.kind, "dev-dependencies"
        )
        if decl.platform is not None:
            section = f"target.{json.dumps(decl.platform)}.{section}"
        here = directories.get(crate.name, ".")
        tables.setdefault(section, []).append(_decl_line(decl, directories, here))
    for section, entries in tables.items():
        lines += [f"[{section}]", *entries]
    return "\n".join(lines) + "\n"


def write_example(spec: Spec, directory: Path) -> Path:
    """Write the registry and the workspace; return the workspace root."""
    registry = directory / "registry"
    for crate in spec.registry:
        package = registry / f"{crate.name}-{crate.version}"
        (package / "src").mkdir(parents=True)
        (package / "src" / "lib.rs").write_text("")
        (package / "Cargo.toml").write_text(manifest(crate, "2021"))
        checksum = hashlib.sha256(f"{crate.name}-{crate.version}".encode()).hexdigest()
        (package / ".cargo-checksum.json").write_text(
            json.dumps({"files": {}, "package": checksum})
        )
    workspace = directory / "ws"
    (workspace / ".cargo").mkdir(parents=True)
    (workspace / ".cargo" / "config.toml").write_text(
        '[source.crates-io]\nreplace-with = "generated"\n'
        f"[source.generated]\ndirectory = {json.dumps(registry.as_posix())}\n"
        "[net]\noffline = true\n"
    )
    root, *others = spec.members
    directories = {root.name: "app" if spec.virtual else "."}
    directories.update((other.name, other.name) for other in others)
    resolver = f'resolver = "{spec.resolver}"\n' if spec.resolver else ""
    members = ", ".join(json.dumps(d) for d in directories.values())
    workspace_table = f"[workspace]\nmembers = [{members}]\n{resolver}"
    if spec.virtual:
        (workspace / "Cargo.toml").write_text(workspace_table)
    for crate in spec.members:
        directory = workspace / directories[crate.name]
        (directory / "src").mkdir(parents=True)
        source = "lib.rs" if crate.lib else "main.rs"
        (directory / "src" / source).write_text("" if crate.lib else "fn main() {}\n")
        text = manifest(crate, spec.edition, directories)
        if directory == workspace:
            text = workspace_table + text
        (directory / "Cargo.toml").write_text(text)
    return workspace


def _feature_names(draw: st.DrawFn) -> list[str]:
    return [f"f{i}" for i in range(draw(st.integers(0, 3)))]


def _declarations(
    draw: st.DrawFn, parent: str, targets: list[Crate], kinds: tuple[str, ...]
) -> list[Decl]:
    """Declarations of some of `targets`, each under one manifest key in one or two tables."""
    chosen = draw(st.lists(st.sampled_from(targets), max_size=4, unique_by=id)) if targets else []
    decls: list[Decl] = []
    for crate in chosen:
        # Two versions of one package need two keys; cargo also insists that every table of
        # one parent uses the same key for one package.
        clash = sum(other.name == crate.name for other in chosen) > 1
        name = crate.name
        if (clash and crate.version != "1.0.0") or draw(st.integers(0, 4)) == 4:
            name = f"{crate.name}-v{crate.version[0]}-{parent}"
        tables = draw(
            st.lists(
                st.tuples(st.sampled_from(kinds), st.sampled_from(PLATFORMS)),
                min_size=1,
                max_size=2,
                unique=True,
            )
        )
        for kind, platform in tables:
            features = sorted(crate.features)
            decls.append(
                Decl(
                    package=crate.name,
                    version=crate.version,
                    name=name,
                    kind=kind,
                    platform=platform,
                    # cargo rejects optional dev-dependencies.
                    optional=kind != "dev" and draw(st.booleans()),
                    default_features=draw(st.booleans()),
                    features=draw(st.lists(st.sampled_from(features), unique=True))
                    if features
                    else [],
                )
            )
    return decls


def _feature_table(
    draw: st.DrawFn, names: list[str], decls: list[Decl], by_key: dict[str, Crate]
) -> dict[str, list[str]]:
    """Features f0..fn (each may use lower ones) plus maybe `default`, over the declarations."""
    keys = sorted({d.name for d in decls if d.kind != "dev"})
    optional = sorted({d.name for d in decls if d.optional})
    hidden = set(draw(st.lists(st.sampled_from(optional), unique=True))) if optional else set()
    table: dict[str, list[str]] = {}
    for position, name in enumerate(names):
        choices: list[str] = names[:position]
        choices += [f"dep:{key}" for key in sorted(hidden)]
        choices += [key for key in optional if key not in hidden]
        for key in keys:
            for feature in sorted(by_key[key].features):
                choices.append(f"{key}/{feature}")
                if key in optional:
                    choices.append(f"{key}?/{feature}")
        table[name] = (
            draw(st.lists(st.sampled_from(choices), max_size=3, unique=True)) if choices else []
        )
    for key in sorted(hidden):
        if not any(f"dep:{key}" in values for values in table.values()):
            # `dep:x` must appear somewhere to hide the implicit feature `x`.
            table[f"use-{key}"] = [f"dep:{key}"]
    if names and draw(st.booleans()):
        table["default"] = draw(st.lists(st.sampled_from(names), min_size=1, unique=True))
    return table


@st.composite
def crates(
    draw: st.DrawFn,
    name: str,
    version: str,
    targets: list[Crate],
    kinds: tuple[str, ...],
    proc_macro: bool = True,
) -> Crate:
    """One package: its declarations first, then a feature table that refers to them."""
    decls = _declarations(draw, name, [t for t in targets if t.name != name], kinds)
    by_key = {
        d.name: next(t for t in targets if (t.name, t.version) == (d.package, d.version))
        for d in decls
    }
    features = _feature_table(draw, _feature_names(draw), decls, by_key)
    is_proc_macro = proc_macro and draw(st.integers(0, 3)) == 3
    return Crate(name, version, is_proc_macro, features, decls)


# (resolver setting, edition): None lets the edition decide, or for a virtual workspace "1".
RESOLVERS = [
    (None, "2021"),  # first: hypothesis draws the first choice most often
    ("1", "2021"),
    ("2", "2021"),
    ("3", "2021"),
    (None, "2018"),
    (None, "2024"),
]


@st.composite
def specs(draw: st.DrawFn) -> Spec:
    """A registry of up to eight packages (some in two versions) and one or two members."""
    registry: list[Crate] = []
    for number in range(draw(st.integers(1, 6))):
        lower = list(registry)
        registry.append(draw(crates(f"p{number}", "1.0.0", lower, ("normal", "build"))))
        if draw(st.integers(0, 4)) == 4:
            registry.append(draw(crates(f"p{number}", "2.0.0", lower, ("normal", "build"))))
    all_kinds = ("normal", "build", "dev")
    members: list[Crate] = []
    if draw(st.booleans()):
        members.append(draw(crates("m1", "0.1.0", registry, all_kinds)))
        members[0].lib = draw(st.integers(0, 3)) != 3
    root = draw(crates("root", "0.1.0", registry + members, all_kinds, proc_macro=False))
    for decl in root.decls:
        if decl.package == "m1":
            decl.path = "m1"  # a path dependency on the other member
    if members and draw(st.booleans()):
        # A dev-dependency cycle: m1's tests use the root, which depends on m1.
        features = sorted(root.features)
        members[0].decls.append(
            Decl(
                "root",
                "0.1.0",
                "root",
                kind="dev",
                default_features=draw(st.booleans()),
                features=draw(st.lists(st.sampled_from(features), unique=True)) if features else [],
                path="root",
            )
        )
    resolver, edition = draw(st.sampled_from(RESOLVERS))
    cross = draw(st.sampled_from(CROSS_TARGETS))
    virtual = draw(st.integers(0, 3)) == 3
    return Spec(registry, [root, *members], resolver, edition, cross, virtual)


@pytest.fixture(scope="module")
def empty_cargo_homes(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Two CARGO_HOMEs without config: each example brings its own `.cargo/config.toml`."""
    return [tmp_path_factory.mktemp("cargo-home") for _ in range(2)]


def check_example(spec: Spec, cargo_homes: list[Path]) -> list[str]:
    """Write the example to a temporary directory and compare featcheck with cargo tree."""
    with tempfile.TemporaryDirectory() as directory:
        workspace = write_example(spec, Path(directory))
        return check_workspace(workspace, [host_triple(), spec.cross_target], cargo_homes)


@pytest.mark.cargo
@settings(
    max_examples=int(_EXAMPLES or 60),
    deadline=None,
    derandomize=_EXAMPLES is None,
    suppress_health_check=list(HealthCheck),
)
@given(spec=specs())
def test_random_workspaces_resolve_like_cargo(spec: Spec, empty_cargo_homes: list[Path]) -> None:
    # Shown by `pytest --hypothesis-show-statistics`: what the examples covered.
    event(f"resolver {spec.resolver or 'implied'}, {'virtual' if spec.virtual else 'package'} root")
    event(f"{len(spec.registry)} registry packages, {len(spec.members)} members")
    assert check_example(spec, empty_cargo_homes) == []


# Examples hypothesis found where featcheck and cargo once disagreed; each stays as a test.
REGRESSIONS = {
    # Resolver 1 with a root package: `cargo tree -p m1`, run from the root, also resolves the
    # root package (cargo's `members_with_features_old`), whose `m1 = { features = ["f0"] }`
    # turns f0 on in m1 although only m1 is built.
    "v1-current-package-joins-the-roots": Spec(
        registry=[Crate("p0", proc_macro=True)],
        members=[
            Crate(
                "root",
                "0.1.0",
                decls=[
                    Decl("p0", "1.0.0", "p0", default_features=False),
                    Decl("m1", "0.1.0", "m1", features=["f0"], path="m1"),
                ],
            ),
            Crate("m1", "0.1.0", proc_macro=True, features={"f0": []}),
        ],
        resolver="1",
    ),
    # A path dependency on a member without a lib target: cargo warns "ignoring invalid
    # dependency `m1` which is missing a lib target" and links nothing, but m1's features and
    # what they ask of p0 still count for the root's build.
    "dependency-without-lib-target-still-unifies": Spec(
        registry=[Crate("p0", features={"f0": [], "f1": []})],
        members=[
            Crate(
                "root",
                "0.1.0",
                decls=[
                    Decl("p0", "1.0.0", "p0"),
                    Decl("m1", "0.1.0", "m1", features=["f0"], path="m1"),
                ],
            ),
            Crate(
                "m1",
                "0.1.0",
                features={"f0": ["p0/f1"]},
                decls=[Decl("p0", "1.0.0", "p0", features=["f0"])],
                lib=False,
            ),
        ],
        resolver="2",
    ),
    **{
        # p1 is used by the root (target) and by the proc-macro pm (host) with the same
        # features, and p0 below it gets other features on each side (the root's f1 on the
        # target, the build-dependency's f2 on the host). cargo tree --target prints p1 twice,
        # each over its own p0: merged into one node, the host's p0 seemed linked.
        f"host-and-target-kept-apart-resolver-{resolver}": Spec(
            registry=[
                Crate("p0", features={"f0": [], "f1": [], "f2": []}),
                Crate("p1", decls=[Decl("p0", "1.0.0", "p0", features=["f0"])]),
                Crate("pm", proc_macro=True, decls=[Decl("p1", "1.0.0", "p1")]),
            ],
            members=[
                Crate(
                    "root",
                    "0.1.0",
                    decls=[
                        Decl("p1", "1.0.0", "p1"),
                        Decl("p0", "1.0.0", "p0", features=["f1"]),
                        Decl("pm", "1.0.0", "pm"),
                        Decl("p0", "1.0.0", "p0", kind="build", features=["f2"]),
                    ],
                )
            ],
            resolver=resolver,
        )
        for resolver in ("1", "2")
    },
}


@pytest.mark.cargo
@pytest.mark.parametrize("spec", REGRESSIONS.values(), ids=REGRESSIONS.keys())
def test_regressions_resolve_like_cargo(spec: Spec, empty_cargo_homes: list[Path]) -> None:
    assert check_example(spec, empty_cargo_homes) == []


@pytest.mark.cargo
@pytest.mark.parametrize("resolver", ["1", "2"])
def test_what_is_linked_leaves_out_the_host_side(
    resolver: str, empty_cargo_homes: list[Path], tmp_path: Path
) -> None:
    # The shape above, as rules see it: only the target side of the root's build, which is
    # p1 over p0 with the root's f1 (resolver 2), or with everything unified (resolver 1).
    spec = REGRESSIONS[f"host-and-target-kept-apart-resolver-{resolver}"]
    workspace = write_example(spec, tmp_path)
    env = {**os.environ, **cargo_environment(empty_cargo_homes[0])}
    metadata = cargo_metadata(workspace, env)
    (member,) = metadata["workspace_members"]
    host = target_cfg(host_triple())
    ours = resolve_builds(
        workspace_from_metadata(metadata), [member], [host], int(resolver), host=host
    )[(member, host.triple)]
    cargo = cargo_tree_graph(workspace, member, host.triple, env)
    linked = {"1": ["f0", "f1", "f2"], "2": ["f0", "f1"]}[resolver]
    for graph in (ours, cargo):
        root = next(graph.nodes())
        target = graph.target_side((root,))
        assert sorted((n.name, sorted(n.features)) for n in target) == [
            ("p0", linked),
            ("p1", []),
            ("root", []),
        ]
        # Both sides stay in the graph: p1 and p0 are each there twice.
        assert sorted(n.name for n in graph.nodes() if n not in target) == ["p0", "p1", "pm"]
