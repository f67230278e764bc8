"""Reading and locating things in Cargo manifests."""
