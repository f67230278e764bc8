from featcheck.workspace.model import crate_key, extern_name, same_crate


def test_names_compare_as_crates_io_compares_them() -> None:
    assert same_crate("parking_lot", "parking-lot")
    assert same_crate("Serde", "serde")
    assert not same_crate("serde", "serde-json")
    assert crate_key("My_Crate") == "my-crate"


def test_extern_names_are_written_with_underscores() -> None:
    assert extern_name("burn-021") == "burn_021"
