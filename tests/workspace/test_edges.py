from metadata_builder import declaration_entry

from featcheck.workspace.cargo_metadata import declaration
from featcheck.workspace.model import NORMAL
from featcheck.workspace.workspace import declarations_for_edge


def test_two_versions_under_two_names_find_their_own_declarations() -> None:
    decls = [
        declaration(declaration_entry("burn", req="=0.22.1")),
        declaration(declaration_entry("burn", req="=0.21.0", rename="burn-021")),
    ]
    kinds = [(NORMAL, None)]
    old = declarations_for_edge(decls, "burn", "0.21.0", kinds, "burn_021", "burn")
    new = declarations_for_edge(decls, "burn", "0.22.1", kinds, "burn", "burn")
    assert (old, new) == ([decls[1]], [decls[0]])
