# kmod: filled in by its owner
