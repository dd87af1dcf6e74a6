# lib: filled in by its owner
