# bpf: filled in by its owner
