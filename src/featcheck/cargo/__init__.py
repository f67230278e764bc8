"""Talking to cargo: running it, and reading what it prints."""
