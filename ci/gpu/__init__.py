"""The GPU harnesses of ktune: the phases of ci/gpu-check (check, bench, suite, dashboard, spaces,
t1, gemm, attention, scaling, vulkan), the PyTorch baselines they measure against and the tables
they write. Standard library only, except the baseline_* modules (PyTorch).

Shared readers: families (kernels/*/family.json), ktune (the binary and its --json), judge (check
verdicts and the "not ok" listing of a database), narrow (narrowed copies of search spaces)."""
