"""Talking to cargo: running it, and reading what it prints.

Records of modules that load before cargo starts are NamedTuples, not dataclasses (audit.py).
"""
