# tools: filled in by its owner
