"""What cargo's own notations mean: cfg expressions and version requirements."""
