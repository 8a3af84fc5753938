"""gputop: a terminal dashboard that shows what an NVIDIA GPU is really doing."""

__version__ = "0.1.0"
