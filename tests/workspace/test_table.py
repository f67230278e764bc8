import json

from metadata_builder import CRATES_IO, MetadataBuilder, declaration_entry

from featcheck.workspace.cargo_metadata import parse_metadata
from featcheck.workspace.model import BUILD, DEV, NORMAL
from featcheck.workspace.workspace import Listed


def test_sources_print_like_cargo_tree() -> None:
    assert Listed(f"{CRATES_IO}#a@1.0.0", "a", "1.0.0", CRATES_IO, "").shown is None
    path = "path+file:///home/me/my%20app#0.1.0"
    assert Listed(path, "a", "0.1.0", None, "").shown == "/home/me/my app"
    git = "git+https://github.com/o/r?branch=main#0123456789abcdef"
    assert Listed("x", "a", "1.0.0", git, "").shown == "https://github.com/o/r?branch=main#01234567"


def test_one_record_per_package_with_edges_bound_to_their_declarations() -> None:
    builder = MetadataBuilder()
    serde = builder.package("serde", {"default": ["std"], "std": []})
    cc = builder.package("cc")
    app = builder.package(
        "app",
        decls=[
            declaration_entry("serde", features=["derive"]),
            declaration_entry("cc", kind="build"),
            declaration_entry("serde", kind="dev"),
            declaration_entry("rand", optional=True),
        ],
        member=True,
    )
    builder.edge(app, serde, (None, None), ("dev", None))
    builder.edge(app, cc, ("build", None))
    workspace = parse_metadata(json.dumps(builder.metadata()))

    member = workspace.members[0]
    assert member is workspace[app]
    assert member is workspace.packages[workspace.by_id[app]]
    assert (member.name, member.version, member.is_library_only(())) == ("app", "1.0.0", True)
    kinds = [(edge.name_in_toml, edge.kind) for edge in member.edges]
    assert kinds == [("serde", NORMAL), ("serde", DEV), ("cc", BUILD)]
    assert all(edge.declaration in member.declarations for edge in member.edges)
    assert member.edges[0].declaration is member.declarations[0]
    assert member.unresolved == frozenset({"rand"})
