"""featcheck: audits the resolved Cargo feature set of Rust projects."""

# The git tag's version, written by the build (pyproject.toml, [tool.setuptools_scm]): a
# constant, so `featcheck --version` and every report cost no metadata lookup at start-up.
from featcheck._version import __version__

__all__ = ["__version__"]
