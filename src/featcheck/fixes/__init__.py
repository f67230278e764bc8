"""Fixes: edits to manifests that turn a missing feature on, computed, confirmed, applied."""
