"""The lab's phases (what runs, and the cause gputop should name) and the profiles that
size them: ``gpu`` for the H200 (about 6 minutes in all) and ``cpu`` for the test suite
(a tiny model, every phase shortened to seconds); ``gpu-train`` and ``cpu-train`` run the
training loop alone through what takes a trainer's GPU or CPU (about 4 minutes on the H200)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from lab.load import Profile


@dataclass(frozen=True)
class Phase:
    name: str
    segment: str  # "serve" (the serve loop, recorded as serve.gputop) or "train"
    truth: str | None  # FACTS.md section 7's cause, None for a healthy phase
    what: str


PHASES = (
    Phase("healthy", "serve", None, "steady traffic"),
    Phase("storm", "serve", "oversized_request",
          "one n=8 / logprobs=20 request at a time among the steady traffic (the seed's case)"),
    Phase("prefill", "serve", "prefill_interference", "long prompts arriving among the decodes"),
    Phase("host", "serve", "host_cpu_contention", "CPU hogs pinned onto the serve loop's cores"),
    Phase("kv", "serve", "kv_pressure", "more long requests than the KV pool holds"),
    Phase("shared", "serve", "gpu_shared",
          "a second process multiplying matrices on the same GPU (time-slicing)"),
    Phase("membw", "serve", "memory_bandwidth", "large-batch decode over long contexts"),
    Phase("train", "train", None, "training with the data ready"),
    Phase("stall", "train", "input_stall", "training while the DataLoader workers sleep"),
    Phase("graph", "train", "tiny_kernels",
          "each step one-element kernels replayed from a CUDA graph"),
)

# The training loop alone, on two cores of its own (its DataLoader workers too), through
# what takes from a trainer: the GPU (a second process), its cores (busy loops pinned onto
# them), a cgroup CPU quota on its main process (as a container's CPU limit), its input.
TRAIN_PHASES = (
    Phase("train", "train", None, "training with the data ready"),
    Phase("shared", "train", "gpu_shared",
          "a second process multiplying matrices on the same GPU (time-slicing)"),
    Phase("host", "train", "host_cpu_contention", "CPU hogs pinned onto the trainer's cores"),
    Phase("quota", "train", "host_cpu_contention",
          "the trainer's main process in a cgroup with a CPU quota (quota_cores)"),
    Phase("stall", "train", "input_stall", "training while the DataLoader workers sleep"),
)
# The serve loop alone, healthy and then with its process under a CPU quota (a serving pod
# whose CPU limit is cut): one Python thread schedules and launches every step.
SERVE_QUOTA_PHASES = (
    Phase("healthy", "serve", None, "steady traffic"),
    Phase("quota", "serve", "host_cpu_contention",
          "the serve loop's process in a cgroup with a CPU quota (quota_cores)"),
)


@dataclass(frozen=True)
class LabProfile:
    device: str
    preset: str
    phase_s: float
    first_phase_s: float  # the healthy phase is also the detector's baseline
    settle_s: float  # steady traffic only, between two phases
    delay_s: float  # gputop's sampling interval
    serve_args: tuple[str, ...]
    train_args: tuple[str, ...]
    steady: Profile
    storm: Profile
    prefill: Profile
    kv: Profile
    membw: Profile
    hogs_per_core: int
    stall_s: float  # per sample, in each DataLoader worker
    graph_factor: float  # a graph step lasts this many healthy steps
    screens: tuple[str, ...] = field(default=())  # phases whose dashboard is drawn
    screen_s: float = 6.0
    start_timeout_s: float = 300.0
    phases: tuple[Phase, ...] = PHASES
    quota_cores: float = 0.25  # the quota phase's CPU limit on the trainer's main process


PROFILES = {
    # one H200, 16 cores: a Qwen2.5-0.5B-shaped model (151,936-token vocabulary), a
    # 491,520-token KV pool (5.6 GiB); about 5 minutes from start to the last phase, so
    # that a rerun fits the device time too
    "gpu": LabProfile(
        device="cuda", preset="qwen2.5-0.5b", phase_s=20.0, first_phase_s=25.0,
        settle_s=5.0, delay_s=1.0,
        serve_args=("--max-model-len", "8192", "--kv-blocks", "30720", "--block-size", "16",
                    "--max-num-seqs", "256", "--max-batched-tokens", "8192"),
        train_args=("--batch", "8", "--seq-len", "512", "--workers", "4"),
        steady=Profile(16, 128, 128),
        storm=Profile(1, 512, 256, n=8, logprobs=20),
        prefill=Profile(12, 6144, 4, pause_s=0.5),
        kv=Profile(96, 6144, 1024),  # 688k tokens asked of a 491k-token pool
        membw=Profile(48, 6144, 2048),  # 393k of 491k: long contexts, nobody waits
        hogs_per_core=3, stall_s=0.25, graph_factor=4.0,
        screens=tuple(p.name for p in PHASES)),
    # two crowded cores, the test suite: seconds per phase, a 1,024-token KV pool
    "cpu": LabProfile(
        device="cpu", preset="tiny", phase_s=2.0, first_phase_s=2.5, settle_s=0.3,
        delay_s=0.5,
        serve_args=("--max-model-len", "512", "--kv-blocks", "64", "--block-size", "16",
                    "--max-num-seqs", "32", "--max-batched-tokens", "512", "--threads", "1"),
        train_args=("--batch", "4", "--seq-len", "32", "--workers", "1", "--threads", "1"),
        steady=Profile(3, 16, 24),
        storm=Profile(1, 32, 16, n=8, logprobs=20),
        prefill=Profile(2, 300, 2),
        kv=Profile(8, 100, 100),
        membw=Profile(3, 150, 60),
        hogs_per_core=2, stall_s=0.05, graph_factor=4.0, screen_s=3.0, start_timeout_s=120.0),
}
# the training loop alone: the same model and batch as ``gpu``'s train phases (65% GPU-Util
# there), the trainer on two cores of its own so that the host phase's hogs find it
PROFILES["gpu-train"] = replace(
    PROFILES["gpu"], phases=TRAIN_PHASES, screens=tuple(p.name for p in TRAIN_PHASES))
PROFILES["cpu-train"] = replace(PROFILES["cpu"], phases=TRAIN_PHASES, screens=("host",))
# the same, each cause milder: one busy loop per core, half a core's quota, a short sleep
PROFILES["gpu-train-mild"] = replace(
    PROFILES["gpu-train"], phases=tuple(p for p in TRAIN_PHASES if p.name != "shared"),
    hogs_per_core=1, quota_cores=0.5, stall_s=0.08, screens=())
PROFILES["gpu-serve-quota"] = replace(
    PROFILES["gpu"], phases=SERVE_QUOTA_PHASES, screens=("quota",))
PROFILES["gpu-serve-quota-mild"] = replace(PROFILES["gpu-serve-quota"], quota_cores=0.5,
                                           screens=())
PROFILES["cpu-serve-quota"] = replace(PROFILES["cpu"], phases=SERVE_QUOTA_PHASES, screens=())
