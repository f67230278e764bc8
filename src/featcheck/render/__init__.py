"""Renderers: each turns an AuditResult into text for one audience, and never sees CLI flags."""
