"""Sources contributed by the community in the reference library, at the same module paths."""
