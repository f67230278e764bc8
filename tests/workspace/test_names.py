import pytest

from featcheck.workspace.model import PackageRef, crate_key, extern_name, same_crate


def test_names_compare_as_crates_io_compares_them() -> None:
    assert same_crate("parking_lot", "parking-lot")
    assert same_crate("Serde", "serde")
    assert not same_crate("serde", "serde-json")
    assert crate_key("My_Crate") == "my-crate"


def test_extern_names_are_written_with_underscores() -> None:
    assert extern_name("burn-021") == "burn_021"


@pytest.mark.parametrize(
    ("source", "local"),
    [
        ("/home/user/app", True),
        ("C:\\Users\\user\\app", True),
        (None, False),
        ("https://github.com/tracel-ai/burn#a1b2c3d4", False),
        ("ssh://git@example.com/team/lib.git#a1b2c3d4", False),
        # A git repository on this machine: cargo's checkout of it is no manifest of the user's.
        ("file:///srv/git/lib#a1b2c3d4", False),
        ("registry `https://registry.example.com/index`", False),
        ("sparse+https://registry.example.com/index/", False),
    ],
)
def test_only_a_path_package_is_the_users_own(source: str | None, local: bool) -> None:
    # cargo tree's `{p}` shows a path package's directory, and a git or registry source's URL.
    assert PackageRef("lib", "0.1.0", source).is_local is local
