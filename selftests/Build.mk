# selftests: filled in by its owner
