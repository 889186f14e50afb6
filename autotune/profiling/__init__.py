"""Deeper-look exports: a torch.profiler trace of the tuned configuration and NVTX ranges for
nsys."""
