"""The workspace as one model: packages by id, their declarations, and the resolved edges each
declaration is bound to. Built once per answer of cargo (or of the files `--no-exec` reads);
everything downstream speaks in its ids, never finding a package again by name and version."""
