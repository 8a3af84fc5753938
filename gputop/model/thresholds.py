"""Every number the diagnosis compares against, in one table, each with the reason it is what it is.

The detector's user-facing knobs (``DetectConfig``: busy util, collapse ratio, latency factor,
hold) stay in ``detect.py`` because the CLI and config file set them; everything else the
signals and signatures use lives here, so a threshold is changed in one place and its reason
is read beside it.  Strengths are 0..1 ramps between two values (``ramp``): a signal that is
barely there scores little, a textbook one scores 1, so causes' scores stay comparable.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Threshold:
    value: float
    why: str


TABLE: dict[str, Threshold] = {t[0]: Threshold(t[1], t[2]) for t in (
    # ---- the GPU
    ("hollow_sm_ratio", 0.12,
     "SM activity under 12% of GPU-Util is busy time on a sliver of the SMs: a CUDA-graph loop "
     "of one-element kernels read 100% util with 0% SM on a real H200; healthy decode, even of "
     "a small model, keeps most SMs resident (ratio 0.4-0.9 in every healthy trace we have)"),
    ("hollow_util_pct", 80.0,
     "hollowness only matters while GPU-Util claims the card is busy"),
    ("hollow_power_ratio", 0.4,
     "without an SM counter (no GPM: A100, L40S), busy time drawing 40% or less of the "
     "power the same GPU drew busy and healthy, clocks unchanged, is busy time on few SMs: "
     "one-element kernels draw near idle power (123 W of a 700 W H200 at 100% util)"),
    ("power_limit_cut", 0.9,
     "an enforced power limit 10%+ under the one the card ran with is a cap someone set "
     "(nvidia-smi -pl, a facility's power-capping script), not the card's own power cap"),
    ("hollow_relative", 0.3,
     "SM/util falling under 0.3x the job's own healthy ratio is the same finding for a job "
     "that was already less than fully resident"),
    ("hollow_sustained_ratio", 0.25,
     "SM activity under a quarter of GPU-Util on hollow_sustained_share of the ticks of a "
     "minute (hollow_span_s) at 80%+ util, within the subject's first two spans, its own "
     "normal SM share as low or unknown (hollow_sustained_base): kernels too small to fill "
     "the GPU (batch-1 inference of a small model, a per-item loop) since gputop first saw "
     "it, with no healthy ratio to fall from (a later phase is judged against the job's "
     "normal: a baseline renewed during a long eval pass would otherwise make the pass its "
     "normal). No healthy trace of 27 corpora has a median under 0.74; ranks spinning in a "
     "collective or a checkpoint's barrier dip under it for seconds"),
    ("hollow_sustained_share", 0.9,
     "...on nearly every tick of the span: a job's lighter phase of 35-75 s (an eval pass's "
     "small batches, an RL job's rollouts between training steps) takes half of a minute's "
     "ticks within 30 s"),
    ("hollow_sustained_base", 0.4,
     "...and only where the subject's own normal SM share is 0.4 or less (learned from those "
     "readings) or not yet known: a phase of a job whose normal is fuller is judged against "
     "that normal (hollow_relative), not against a fixed line"),
    ("prompts_batch", 1.3,
     "an engine's prompt seconds are interference only beside other requests decoding: 1.3+ "
     "requests in flight on average over the last 8 ticks (two slots, one emptying between "
     "tickets, read 1.6; one request at a time reads 1 or less)"),
    ("barrier_hold_s", 30.0,
     "every GPU of a multi-GPU job on a sliver of its SMs at once (SM under a quarter of its "
     "util on each) is the ranks together in a collective: a checkpoint's state-dict gather "
     "or a barrier passes within seconds (6 s, then the GPUs idle while rank 0 writes, in "
     "corpus AH's FSDP job); a job's own small kernels hold for good"),
    ("hollow_span_s", 60.0,
     "the span the sustained hollowness is judged over: longer than a checkpoint's barrier "
     "or an evaluation pass's small batches"),
    ("util_drop_pts", 15.0,
     "GPU-Util 15 points under its healthy median: more than the +-6 points healthy serving "
     "wobbles by tick, so the GPU is waiting on something"),
    ("util_output_held", 0.9,
     "GPU-Util fell but tokens/s is 90%+ of its baseline with the batch no larger, latency "
     "and queue at their normal: the same output in less busy time, nothing waited (a GPU "
     "that waits with its batch held makes every step slower; an 8-server box's healthy "
     "GPU dipped 69 -> 50% for three ticks)"),
    ("util_batch_grown", 1.3,
     "output held only by a batch 1.3x its normal is not held: continuous batching keeps "
     "tokens/s by running more sequences, each slower (Little's law), when the host starves "
     "the engine"),
    ("dram_high_pct", 85.0,
     "DRAM bandwidth over ~85% of peak is the memory roofline: HBM rarely sustains more than "
     "90-93% of its datasheet figure (the H200 copy phase read 4.2 of 4.8 TB/s)"),
    ("pause_s", 90.0,
     "a rank off the GPU (checkpoint, eval on rank 0) while the others wait in a barrier is a "
     "pause, not a stall, unless it lasts this long (then the job is hung on it)"),
    ("link_busy_mib_s", 2000.0,
     "NVLink traffic (received plus sent) a job's ranks move for one of them carrying a "
     "fraction of it to stand out: an FSDP job's collectives move 10-100 GB/s a GPU"),
    ("rank_hang_s", 15.0,
     "a rank other than the job's first off the GPU while the others spin in the collective "
     "is stuck (the first rank checkpoints and evaluates by design, and a rank that paused "
     "this long before and came back pauses by design): named after this long"),
    ("dram_rise_pts", 10.0,
     "decode is memory-bound by nature; a rise of 10+ points over its own baseline is what "
     "changed (longer contexts, a bigger batch), not the workload's character"),
    ("clock_drop", 0.12,
     "an SM clock 12%+ under its own busy baseline (or its peers'): a power-capped H100 "
     "wobbles by ~5-8% while healthy"),
    ("saturated_util_pct", 90.0,
     "a job whose GPU-Util was 80-90%+ by itself when healthy (shared_taken ramps over those "
     "ten points) leaves little idle time to share: another process's measured SM time on "
     "its GPU (shared 0.6-0.9, i.e. 20+ points) is taken from its time slices, even where "
     "its own per-process reading does not fall; only for a job with no counter to show "
     "its rate"),
    ("fan_spun_up_pct", 60.0,
     "a board with its own fan at 60%+ showing only \"thermal (sw)\" sits at its temperature "
     "target by design (GPU Boost), judged as any clock cut (clock_drop); with its fan "
     "under that (stuck at 22% on a workstation A6000) the slowdown is a fault"),
    ("suspect_floor", 0.05,
     "an episode names the causes whose mean score over its ticks is over 0.05 (under it, a "
     "cause is noise beside the others); where none is, it names the best one if its mean "
     "is half the floor or more (a mild harm keeps a measured cause's score low; one "
     "tick's blip in a long episode is not an explanation)"),
    ("lone_fault_drop", 0.05,
     "one busy GPU of a job held by a fault reason its peers lack (HW slowdown, power brake, "
     "thermal) with its SM clock 5%+ under theirs is out of step even where the baseline saw "
     "it so from the start: healthy cards of one job under the same load read the same clock "
     "(in every healthy multi-GPU trace of the development corpora no card showed one)"),
    ("fault_clock_drop", 0.04,
     "a busy GPU's clock 4%+ under its own baseline with a fault reason it did not show "
     "healthy (thermal or HW slowdown, a power brake) is throttling for a job with no other "
     "measure of its rate (a counter or tokens/s that held say a cut this small cost nothing): "
     "no healthy trace of the development corpora shows such a reason on a busy card, and "
     "the clock is the work's rate (a 4-8% cut is what a rack's inlet air 10 C warmer does)"),
    ("fault_held_clock_drop", 0.08,
     "...and every busy GPU's clock 8%+ under its baseline with such a reason is throttling "
     "even where the work held (a decode bound by memory barely slows at a lower SM clock): "
     "the card is protecting itself and its headroom is gone; a power-capped card wobbles "
     "5-8% under its usual reason, and a fan-cooled board at its temperature target (only "
     "\"thermal (sw)\", its fan spun up) is no fault"),
    ("hot_c", 8.0,
     "a GPU 8+ degrees hotter than its peers or its own baseline in the same job: cooling "
     "or airflow, the usual start of thermal slowdown"),
    ("sm_spread_pts", 12.0,
     "ranks of one collective that still run their own shard differ by 10-30 SM points; the "
     "one still computing while the others wait reads higher"),
    ("shared_sm_pct", 8.0,
     "another process with 8%+ per-process SM on the job's GPU takes time slices from it "
     "(NVML per-process utilization, only exact with one process: a lower bound)"),
    ("shared_mem_bytes", 512 * 2**20,
     "without per-process SM, a new process holding 512+ MiB on the job's GPU is a tenant"),
    ("sawtooth_busy_pct", 70.0,
     "a sample at 70%+ util is a step running"),
    ("sawtooth_idle_pct", 25.0,
     "a sample at 25%- util is the GPU waiting between steps"),
    ("sawtooth_job_trough", 0.6,
     "for a job (no serving engine), a sample at 60% of its own util (or 35 points under "
     "it) is a wait too: NVML averages sub-second waits into shallow troughs"),
    ("sawtooth_share", 0.2,
     "at least a fifth of the samples on each side: busy and waiting alternate"),
    ("sawtooth_job_busy", 0.06,
     "a job waiting most of the time (70%+ of its samples idle) with steps in 6%+ of them, "
     "coming back three times or more in the window: starved between steps"),
    # ---- the engine
    ("min_slow_share", 0.05,
     "a latency collapse moves many observations (every sequence in a stalled batch), not "
     "the p99 alone: 5%+ of the window beyond the threshold; one slow request is one"),
    ("min_slow_readings", 3,
     "slow observations in 3+ separate engine readings of the hold (over 2 intervals at "
     "least, when the interval is longer than half the hold): a one-off (one 10k-token "
     "prompt) lands in one or two"),
    ("itl_load_exponent", 0.7,
     "decode step time grows sublinearly with the batch (weights are read once per step, each "
     "sequence adds its KV): from 10 to 100 sequences an 8B model's ITL grows ~2.2x (exponent "
     "0.35), with 8k contexts ~4x (0.64); 0.7 allows for both"),
    ("prefill_hold_s", 10.0,
     "a burst of arrivals is admitted by chunked prefill in a few seconds, the decodes "
     "stalled meanwhile by design (the engine prefills first); prompts that keep the token "
     "budget 10 s or more are interference"),
    ("sustained_span_s", 20.0,
     "findings that show on a share of the ticks, not every one, are judged over 20 s of "
     "ticks: long prompts arriving steadily stall only the steps that carry their chunks "
     "(12k-token prompts at 1/s stall ~4% of an H100's decode steps, each 4-6x longer); a "
     "contended host costs the work in whichever way the batch absorbs it, tick by tick..."),
    ("sustained_share", 0.5,
     "...and must hold on half of them (prompts longer than usual costing the decodes; the "
     "host contended with harm): a burst admitted, one pasted document, a build's first "
     "seconds are a few ticks of it"),
    ("prefill_mild_share", 0.7,
     "prompts 1.2-1.6x their usual length taking twice their usual share of the steps, every "
     "token slower and tokens/s down (prefill_mild) are judged over 30 s of ticks and must "
     "hold on 70% of them: a burst of arrivals after a lull is prefilled before it decodes, "
     "so its prompts per generated token leap for 10-20 s (a pod's traffic returning)"),
    ("prefill_apart_s", 5.0,
     "prompts that stalled the decodes more than 5 s before this stall began..."),
    ("prefill_memory_s", 60.0,
     "...and within the last minute recur (users pasting documents every 20-30 s): a stall "
     "of theirs is judged at once, not held as a burst being admitted (one pasted document, "
     "a few long prompts together)"),
    ("step_batch_grown", 1.3,
     "a batch 1.3x its usual at as many tokens/s or more is a busier service: each step "
     "carries more sequences and takes longer for it (every token slower by the typical "
     "token, not a slower engine)"),
    ("slow_span_s", 30.0,
     "every token 2x slower with the batch swollen at the same tokens/s, on half of 30 s of "
     "ticks: the typical step read from histogram buckets jumps between readings (1.5-2.6x "
     "for one oversized request), and bursts of traffic give seconds of it"),
    ("sustained_linger_s", 5.0,
     "a sustained finding keeps its episode open only while it showed within the last 5 s: "
     "the span's older ticks are the past once the cause has gone (a storm that ended)"),
    ("host_sustained", 0.4,
     "host contention (the tree's lost CPU, pressure, run queue, switches; 0..1) of 0.4 with "
     "harm of any kind on half the ticks of the span: 0 of 339 healthy traces reach it, 42 "
     "of 46 contended ones do"),
    ("host_strong", 0.7,
     "host contention this strong (0..1), with the tree's own CPU lost (a third of it on a "
     "crowded host, or its quota throttling a quarter more periods: cpu_lost 0.5), is "
     "enough with milder harm: the GPU 8 points less busy (host_mild_util_pts, beyond the "
     "+-6 points healthy serving wobbles by), each token 1.15x (host_mild_step), a job's own "
     "rate at 0.9x (host_mild_tokens; an engine's tokens/s follows its traffic). No healthy "
     "trace of 27 corpora holds that on half the ticks of sustained_span_s; 3 contended "
     "ones were silent without it (a pod's quota costing 8 util points and 1.2x per token, "
     "tokens/s kept by the batch)"),
    ("host_mild_util_pts", 8.0, "see host_strong"),
    ("host_mild_step", 1.15, "see host_strong"),
    ("host_mild_tokens", 0.9, "see host_strong"),
    ("prefill_tokens_max", 1.3,
     "tokens/s 1.3x its normal or more while prompts arrive is more work arriving (traffic "
     "back after a restart, a batch job's surge), not prompts starving the decodes"),
    ("surge_s", 30.0,
     "a burst of arrivals with prompts of the usual length queues and slows the batch for "
     "seconds to tens of seconds while the engine works at its capacity; longer is a problem"),
    ("latency_severe", 4.0,
     "a latency 4x its healthy value opens an episode after the hold; a milder one (2-4x) "
     "must hold twice as long: a burst of arrivals gives a few seconds of it, a stall more"),
    ("itl50_load_exponent", 0.35,
     "the typical step (ITL p50) is decode alone: weights read once, KV per sequence; an 8B "
     "model from 10 to 100 sequences ~2.2x (exponent 0.35)"),
    ("step_alone", 2.2,
     "every token (ITL p50, read from the bucket's exact mean where the bucket holds most "
     "observations) 2.2x slower than at the batch the arrivals explain, with no memory "
     "traffic or prefill to account for it, is the service slowing by itself"),
    ("step_reads_rise_pts", 3.0,
     "every step far slower with DRAM's share of the time up 3+ points (7.5 fully): the pass "
     "reads more (blind corpora's dequantising fallbacks: +3 to +16 points at a 2-8x batch); "
     "work beside the pass (n x logprobs) leaves DRAM idle longer, its share falling 4-12"),
    ("itl_burst_tokens", 1.8,
     "a p99 tail while tokens/s runs 1.8x+ its normal and the typical token is as fast as "
     "ever (ITL p50 under 1.4x) is a burst of arrivals being absorbed, not harm"),
    ("shared_mild_span_s", 40.0,
     "another process on the subject's GPU (measured SM time, or a newcomer holding memory) "
     "with a milder cost on shared_mild_share of this span's ticks: a job's own rate or an "
     "engine's tokens/s per sequence at 0.9x (shared_mild_rate), or each token 1.15x "
     "(shared_mild_step). "
     "Of 27 corpora's healthy traces one shows another process there for 30+ s at all (an "
     "engine restarting beside its old process); 4 mild tenants (a second job, an eval "
     "container, a Whisper beside TGI) cost 12-16% for minutes and were silent"),
    ("shared_mild_share", 0.8, "see shared_mild_span_s"),
    ("shared_mild_load", 1.25,
     "an engine's milder cost beside a tenant is judged only at a batch within 1.25x of its "
     "baseline's either way: traffic that ebbs or surges moves tokens/s and each token's time "
     "by the engine's own physics (an adversarial review's idle notebook beside an engine "
     "whose batch went 30 -> 10 and 30 -> 60 read as shared)"),
    ("shared_mild_rate", 0.9, "see shared_mild_span_s"),
    ("shared_mild_step", 1.15, "see shared_mild_span_s"),
    ("shared_step_slow", 1.3,
     "another process on the engine's GPU taking SM time (measured, not a memory-only "
     "newcomer) with every token 1.3x slower is harm from its time slices, even when a "
     "larger batch holds tokens/s (a notebook's fine-tune beside vLLM read 1.2-1.5x once "
     "the p50 no longer flickered across bucket bounds); it clears under 1.2x"),
    ("baseline_tail_ratio", 3.0,
     "a tick whose ITL p99 is 3x its normal is not learned as normal, however few "
     "requests carry the tail"),
    ("step_reads_slow", 1.3,
     "every token 1.3x slower (ITL p50) while each step reads more (DRAM 10+ points, or the "
     "KV per sequence far up) is the step at its bandwidth when the output falls with it"),
    ("step_reads_tokens", 0.8,
     "...tokens/s at 80%- of baseline with demand kept: the batch did not grow to make up "
     "for the slower steps (a busier service keeps its output)"),
    ("reads_latency_slow", 1.4,
     "...or, the output kept, every token 1.4x slower while each sequence's context is far "
     "longer (KV per sequence 2.25x+ its normal, and than before a restart of the engine; "
     "not more requests arriving): the users wait longer for every token of "
     "their long chats, which is the harm (a compliance chat growing to 30k tokens read "
     "ITL +50% at an unchanged tokens/s)"),
    ("reads_latency_tokens", 2.0,
     "...the output kept or grown with the sessions, not doubled: tokens/s 2x+ its normal is "
     "another workload arriving (a batch job's long generations, an offline run joining), "
     "whose own batch slows each step and whose tokens no user waits on one by one"),
    ("step_alone_hold_s", 15.0,
     "the typical step's p50 moves in coarse histogram buckets and with bursts of prefill: "
     "alone, it must hold 15 s to open an episode"),
    ("arrivals_grown", 1.2,
     "requests finishing 1.2x as often as usual, each with no more tokens than usual (1.2x), "
     "is more traffic: the batch outgrows the output by Little's law as each step slows "
     "with it (a morning ramp), where one request's work stalling the batch finishes "
     "fewer requests, or longer ones..."),
    ("arrivals_grown_s", 30.0,
     "...with the batch grown for 30 s or more before: arrivals fill it over minutes, one "
     "request's n sequences (which vLLM and SGLang count as n requests) join it at once"),
    ("slow_step", 1.6,
     "...the span measure of it: every token 1.6x slower with the sequences slower than the "
     "batch's growth explains, on half of 30 s of ticks (an n-best / logprobs request "
     "costs 1.5-2x a step; a step time straddling a bucket bound is read from both buckets' "
     "exact mean, no longer flickering across 2x)"),
    ("step_slow", 2.0,
     "every token (ITL p50, not only the tail) taking 2x its healthy time at this batch size"),
    ("demand_slack", 1.5,
     "a batch up to 1.5x what the finishing rate explains (Little's law: in flight = rate x "
     "time) is noise in a few seconds' count of finished requests; beyond, the batch grew "
     "because each request takes longer, and gets no latency allowance for its size"),
    ("load_match", 1.5,
     "healthy readings within 1.5x of the current batch size are the baseline at that load"),
    ("queue_growth_min", 8.0,
     "a queue 8+ requests (or half the usual batch) above its healthy median"),
    ("demand_kept", 0.75,
     "running + waiting at 75%+ of its healthy median: demand is still there, so fewer "
     "tokens/s is the engine's doing, not the traffic's"),
    ("kv_bytes_ratio", 1.3,
     "decode reads the weights and every running sequence's KV each step: KV that makes "
     "that 1.3x its healthy size (2x for full strength) is a step that much longer"),
    ("prefill_mfu", 0.5,
     "prefill runs near half the card's dense peak (2 FLOPs per parameter per token), so "
     "its cost is a share of the GPU, not only a rate"),
    ("prefill_ratio", 2.0,
     "computed (not cache-hit) prompt tokens/s at 2x+ its baseline is a prefill burst"),
    ("kv_full", 0.9,
     "vLLM and SGLang preempt / retract when the pool has no free block; usage 90%+ with "
     "preemptions is the pool at its limit"),
    ("preempt_per_s", 0.2,
     "a healthy engine preempts rarely; 0.2/s (one every 5 s) and 3x its baseline is pressure"),
    ("preempt_span_s", 12.0,
     "...or, over the 12 s of points kept, preemptions per finished request (long sequences "
     "finish slowly: one preemption per request served is pressure at any rate per second)"),
    ("preempt_min", 2,
     "...at least 2 of them in that span: one is a burst"),
    ("notable_n", 8,
     "vLLM request_params_n: n >= 8 sequences per request, the seed's storm"),
    ("notable_max_tokens", 8192,
     "max_tokens this large keeps a sequence in the batch for minutes"),
    ("fanout_min", 8.0,
     "a batch that at least doubles (by 8+ sequences) from one reading to the next with no new "
     "prompt work, or with one prompt that all but one of them read from the prefix cache, is "
     "likely one request's n sequences: evidence for a cause, never a trigger"),
    ("spec_mild_step", 1.4,
     "drafts accepted 35%+ less often (not half) open a speculative-decoding finding where "
     "every token (ITL p50) is 1.4x slower with it and nothing else explains that (no cut "
     "clock, longer prompts or contexts, tokens/s at most 1.2x): an EAGLE head that fell "
     "from 75% to 46% after a system-prompt change cost 1.6x per token"),
    ("spec_wasted", 0.15,
     "speculative decoding accepting under 15% of its drafts (after accepting far more) "
     "costs more than it saves: every step drafts and verifies k tokens to keep about one"),
    ("accept_carry_s", 600.0,
     "the speculative acceptance an engine had before it restarted is its normal for 10 "
     "minutes of the new run: a canary's mismatched draft shows in its first requests, and "
     "an operator who chose a cheaper draft (n-gram lookup) is not told so forever"),
    ("work_drop", 0.6,
     "a trainer's steps/samples per second at 60%- of its own baseline"),
    # ---- the host
    ("thread_busy_pct", 90.0,
     "a thread at 90%+ of one core cannot go faster: an input pipeline or a launch loop is "
     "CPU-bound"),
    ("launch_util_drop_pts", 7.0,
     "launch calls measured lasting milliseconds (eBPF) with GPU-Util 7+ points under its "
     "healthy level: the gaps between steps are the launches' (the stall is measured, so "
     "half the unexplained drop the util trigger needs)"),
    ("alone_span_s", 60.0,
     "a cause measured directly, not inferred, on alone_share of a minute's ticks is named "
     "though no cost shows yet: launch calls stalling at a scheduler slice's scale (eBPF, "
     "jitter 0.7+: a deep queue of kernels rides out each stall, GPU-Util holds), or the "
     "host at its most contended with the tree's own CPU taken (/proc: host_alone_*); an "
     "IRQ or a neighbour on the engine's cores is there to fix before the work pays"),
    ("alone_share", 0.8, "see alone_span_s"),
    ("alone_linger_s", 30.0,
     "...and its episode stays open while the cause showed within 30 s: stalls that come "
     "and go with a cron's period are one finding, not one alert per period"),
    ("alone_util_pct", 50.0,
     "...on a GPU at least half busy: an engine idle at night, a few launches a second with "
     "the host's nightly jobs about, has no work for the stalls to cost"),
    ("launch_queued_ratio", 2.0,
     "the typical launch call (p50) 2x its usual or more (fully at 2x this) is calls waiting "
     "for room in a full queue of kernels, a GPU-bound job's CPU running ahead: not a "
     "descheduled thread, whose typical call stays microseconds while its tail takes a slice"),
    ("host_alone_lost", 0.4,
     "the tree's lost CPU (cpu_lost, 0..1) with the host contended at 0.9+ and its threads "
     "preempted 12x+ as often (preempted 0.5+): the CPU is taken from it, not left"),
    ("launch_tail_us", 1000.0,
     "a launch API's p99 counts as a stall from a third of this up, fully here: a call "
     "descheduled mid-way lasts a scheduler slice (ms; the seed's p99 13.1 ms); a tail of tens "
     "to hundreds of microseconds, however far over its usual, is a big graph or a lock"),
    ("launch_stalled_share", 0.12,
     "a launching process inside calls of 1 ms or more for 12% of its time (a quarter of "
     "that begins to count): a few descheduled calls a second cost a launch-bound loop "
     "that much GPU time, and move neither the p99 nor, once learned, the longest call"),
    ("launch_jitter_ratio", 20.0,
     "launch p99 20x its p50 and over 1 ms: the seed measured 16.7 us -> 13.1 ms when the "
     "launching thread was preempted"),
    # ---- episodes
    ("job_hold_s", 5.0,
     "a job without engine metrics is judged on GPU patterns, which need a few seconds to "
     "tell a phase from a blip (GPM samples every ~1 s)"),
    ("job_idle_pts", 20.0,
     "a job without a counter whose GPU-Util sits 20+ points under its healthy level: a "
     "fifth of its work lost to waiting (healthy steps hold util within a few points)"),
    ("prefill_min_requests", 2.0,
     "prefill interference needs another request beside the prompt: a server with one "
     "request in flight (running and waiting: SGLang counts a prompt being prefilled as "
     "waiting) waits on its own prompt, and its tokens/s follows it (a single user's "
     "llama.cpp)"),
    ("own_prompt_ratio", 2.0,
     "...and its first token waits on its own prompt when prompts are twice their usual "
     "length or more"),
    ("straddle_share", 0.2,
     "an ITL p50 is read from the exact mean of its bucket and the larger neighbour when the "
     "neighbour holds a fifth of the observations..."),
    ("straddle_held", 0.8,
     "...and the two four fifths: one step time clustered at the bound they share (10 ms +- "
     "2 over vLLM's 10 ms), not a spread of them"),
    ("job_phase_pts", 10.0,
     "a job's GPU-Util within 10 points of a level it ran at before is that level again..."),
    ("job_phase_share", 0.25,
     "...and a level held by a quarter of its healthy window's samples is a phase of its own "
     "(an RL loop's rollouts at a third of its training phases' GPU-Util), no stall: a stall "
     "begins at a level the job never ran at while healthy, and ticks 20 points under the "
     "usual are not learned (nor, so, later rollouts: this holds for the first cycles)"),
    ("job_idle_hold_s", 30.0,
     "that idling must last half a minute: a checkpoint, a shorter phase, a blip is no stall"),
    ("dram_seen_age_s", 60.0,
     "a DRAM level is the job's own when its baseline held it this long ago or more: a phase "
     "it returns to (rollouts between training steps) is no onset, while an onset's own "
     "first minute is not yet its past"),
    ("job_dram_rate", 0.85,
     "a job whose DRAM traffic rose to saturation pays for it in its own rate: a counter at "
     "this x its baseline or less"),
    ("job_dram_rate_far", 0.6,
     "a job's rate at this x its baseline or less with its DRAM traffic 20+ points up counts "
     "from a lower level (half the saturation score): memory-bound phases within each step, "
     "an unfused optimizer's, average out under saturation over a tick"),
    ("job_dram_rate_stopped", 0.2,
     "...but a rate at this x its baseline or less is a counter all but stopped: another phase "
     "(an evaluation pass, no backward), which a memory-bound share of each step cannot cost; "
     "only saturation itself speaks for the memory then"),
    ("job_dram_per_work", 1.5,
     "...or with each unit of the job's work reading this x the DRAM traffic it did (DRAM "
     "activity over its own, over its counter's rate, at job_dram_rate or less): the step's "
     "time moved to its memory (a dense voxel scatter: DRAM 40 -> 62% at 23% fewer samples/s, "
     "2x the bytes per sample), read from the same lower level; not without a counter (an "
     "RL loop's decoding rollouts read as more traffic against a baseline of both phases)"),
    ("job_dram_share", 0.93,
     "or in its SM share: SM active over GPU-Util at this x its own or less (the SMs stall "
     "on memory); a copy phase that keeps every SM as busy is the job's own work"),
    ("odd_util_pts", 8.0,
     "a rank's GPU-Util this many points further under its peers' than when healthy, the "
     "peers at 90%+, reads as out of step (fully at 2.5x): the peers spin in the collective "
     "while it waits on its own host side (a device sync per bucket, metrics on one rank)"),
    ("odd_util_window_s", 10.0,
     "a rank's GPU-Util is compared over this long: the stages of a pipeline take turns to "
     "dip (its bubbles) and even out, a rank waiting on its own host side does not"),
    ("outgrown_tokens", 2.0,
     "tokens/s at this x the baseline or more, with the batch at outgrown_batch x: the "
     "engine serves a load its baseline never saw, and keeps up with it"),
    ("outgrown_batch", 3.0,
     "... the batch at this x its baseline or more: a latency tail scaled up from the few "
     "sequences it was learned at (a service ramping up, a load test) is no normal, so the "
     "latency triggers wait (the others, and a latency episode already open, do not)"),
    ("unseen_job_spread_pts", 30.0,
     "GPUs whose processes are not visible, healthy at GPU-Util levels this far apart, are "
     "not one job: none is judged out of step with the others"),
    ("sawtooth_sm_floor_pct", 5.0,
     "a job whose normal SM activity is under 5% (or its GPU-Util under the idle bar) has "
     "no steps to wait between: it was learned idle (a checkpoint loading as the job "
     "resumes), and its samples' noise is no saw-tooth"),
    ("sawtooth_sm_backing", 0.25,
     "a util saw-tooth's busy samples are steps when the SMs are active over the window at a "
     "quarter or more of what that busy time makes them at the job's own SM per busy point: "
     "a checkpoint's copies read 100% on one NVML sample in five or ten with the SMs at 1%"),
    ("work_stopped_s", 5.0,
     "a trainer's counter that has not moved for this long (and 3 of its steps) has stopped: "
     "an eval pass or a checkpoint, whatever thread it pegs; a slow input slows the steps"),
    ("work_known_max_s", 45.0,
     "the longest a trainer's saw-tooth waits for its counter to say whether its steps "
     "stopped altogether (an eval pass: no episode) or come slower (a stall): 3 steps and a "
     "reading, at most this"),
    ("job_idle_alone_hold_s", 90.0,
     "that idling, or a counter's fall with only a lower GPU-Util beside it, must last a "
     "minute and a half when nothing else says the steps wait (no input thread pegged, no "
     "contended host, no launch stalls, no saw-tooth): an eval pass runs forward only at a "
     "lower GPU-Util for a minute or so"),
    ("job_min_age_s", 30.0,
     "a process that just appeared is starting up (loading weights, capturing CUDA graphs: "
     "vLLM's capture is tens of seconds of tiny kernels): not yet judged"),
    ("sawtooth_changes", 4,
     "busy and idle must alternate at least twice in the window: one step from busy to idle "
     "(a checkpoint starting, a job ending) is no saw-tooth"),
    ("learn_s", 20.0,
     "an engine's latency (its histograms) is judged once gputop has watched it 20 s: the "
     "first seconds' windows hold a handful of observations, and a normal learned from them "
     "makes every later reading look slow (tokens/s, util and the queue are judged sooner)"),
    ("tail_ctx_ratio", 2.0,
     "a batch draining (under the demand-kept share of its usual size, none waiting) whose "
     "KV per running sequence is 2x the baseline's is the tail of a batch of generations: "
     "its longest sequences left, each token reading its whole context (a rollout's end); "
     "slower tokens there open nothing"),
    ("ctx_onset", 1.5,
     "a tick whose KV per running sequence (the context each step reads) is 1.5x the "
     "baseline's is not learned: long contexts arriving over "
     "minutes would otherwise enter the baseline tick by tick and hide their own slowdown"),
    ("verdict_min", 0.2,
     "a mild throughput or latency trigger (tokens/s above 0.3x, latency under 4x) opens "
     "an episode once a cause scores 0.2 or more over the ticks it held (every signal of "
     "one cause at least faintly there)..."),
    ("unclear_hold_s", 30.0,
     "...or once the trigger has held 30 s with no cause that strong: unexplained, it is "
     "still news, but a few seconds of one signal alone (a lumpy counter, a burst) is not; "
     "tokens/s low while the batch swells (arrivals being prefilled) waits the same"),
    ("peak_keep", 0.75,
     "an open episode quotes its newest tick unless that tick is this much milder than its "
     "peak (work lost, latency ratio, or a piece of evidence's log-distance from its "
     "baseline): a recovering tick is not the harm (the H200 lab's graph phase ended on "
     "GPU-Util 83% on 25% SM after 99% on 0.3%), while ordinary tick-to-tick noise still "
     "shows the screen's own numbers"),
    ("reopen_distinct", 0.5,
     "a finding within REOPEN_S of the last episode's end is that episode again, unless both "
     "verdicts are this clear and differ (a DataLoader stall, then CUDA-graph replays of tiny "
     "kernels: two troubles); a faint verdict that sharpens (long contexts read as memory "
     "bandwidth, then the KV pool full) is one trouble as it unfolds"),
    ("restart_warmup_s", 30.0,
     "after an engine restart, baselines wait for steady service: a load balancer's slow "
     "start is not the engine's normal"),
    ("noise_span_s", 180.0,
     "how far back a service's own noise is read: the ticks, outside any episode, on which "
     "an engine trigger fired and cleared again before its hold (a few minutes of traffic)"),
    ("noise_share", 0.1,
     "a service whose triggers fire on a tenth of its ordinary ticks dips that way as its "
     "normal (long prefills stalling a small batch, on/off clients): its dips are its traffic, "
     "and a fault must hold through them"),
    ("noise_min_s", 60.0,
     "the noise is judged only over a minute of ticks at least (a new service's first "
     "dips are too few to call it noisy)"),
    ("noise_cv", 0.35,
     "...and before that, a service whose healthy tokens/s (the samples it was learned from) "
     "spread by a third of their mean or more (long prefills stalling a small batch tick by "
     "tick) is taken as noisy from the start; a steady one (5-15%) is not"),
    ("noisy_hold_s", 15.0,
     "in a noisy service an engine trigger must hold 15 s unbroken: its routine dips last a "
     "few ticks each, a fault holds on every tick"),
    ("stale_baseline_s", 120.0,
     "two minutes in which nothing fired and yet no tick was clean enough to learn is a "
     "baseline that no longer describes the service (learned from a sparse scrape's first "
     "readings, or a workload that changed for good): it is learned afresh, as after a "
     "restart; an onset fires long before"),
    ("noisy_span_share", 0.8,
     "...and a span-judged engine finding (prompts stalling the decodes, every token "
     "slower) must hold on four ticks in five of its span, not half"),
    ("settle_s", 10.0,
     "after an episode closes, the backlog drains for a while: not a baseline either"),
)}


def t(name: str) -> float:
    return TABLE[name].value


def ramp(value: float | None, zero: float, one: float) -> float:
    """0 at ``zero``, 1 at ``one`` (either direction), linear between; None is 0."""
    if value is None or zero == one:
        return 0.0
    x = (value - zero) / (one - zero)
    return 0.0 if x <= 0 else 1.0 if x >= 1 else x
