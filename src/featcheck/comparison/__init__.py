"""Only what is new: findings compared with a baseline file or with the audit of an earlier
revision, by a fingerprint that survives moved lines and patch upgrades."""
