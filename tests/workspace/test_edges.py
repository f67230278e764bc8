from metadata_builder import declaration_entry

from featcheck.workspace.table import declaration, declarations_for_edge


def test_two_versions_under_two_names_find_their_own_declarations() -> None:
    decls = [
        declaration(declaration_entry("burn", req="=0.22.1")),
        declaration(declaration_entry("burn", req="=0.21.0", rename="burn-021")),
    ]
    old = {"name": "burn", "version": "0.21.0", "targets": [{"kind": ["lib"], "name": "burn"}]}
    new = {**old, "version": "0.22.1"}
    edge = {"dep_kinds": [{"kind": None, "target": None}]}
    assert declarations_for_edge(decls, old, {**edge, "name": "burn_021"}) == [decls[1]]
    assert declarations_for_edge(decls, new, {**edge, "name": "burn"}) == [decls[0]]
