from featcheck.workspace.model import DEP, DEP_FEATURE, FEATURE, parse_feature_value


def test_feature_values_read_like_cargo() -> None:
    assert parse_feature_value("std") == (FEATURE, "std", "", False)
    assert parse_feature_value("dep:rayon") == (DEP, "rayon", "", False)
    assert parse_feature_value("gemm/rayon") == (DEP_FEATURE, "gemm", "rayon", False)
    assert parse_feature_value("gemm?/rayon") == (DEP_FEATURE, "gemm", "rayon", True)
    # Only the first slash splits; the rest is the dependency's own feature value.
    assert parse_feature_value("a?/b/c") == (DEP_FEATURE, "a", "b/c", True)
