"""The GPU lab: gputop's pathologies reproduced with real kernels (issue 21).

A continuous-batching decode server over a real transformers architecture with random
weights (``serve_loop``), a training loop whose DataLoader can be made slow
(``train_loop``), a load driver (``load``), side processes that crowd the host or the
GPU (``hogs``) and a phase runner (``run``) that records with wall times which pathology
ran when, while ``gputop record`` watches through its real CLI.  Runs on CUDA (the
H200 through ``scripts/gpu-lab.sh``) and on the CPU with a tiny model (the test suite).
Nothing here imports gputop except ``report``, which reads the recordings afterwards.
"""
