"""Configuration and suppressions: what a project asks featcheck to run, report and allow."""
