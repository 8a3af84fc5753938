// gputop's eBPF program: host-side duration of CUDA API calls per (process, API), as
// log-linear histograms (8 sub-buckets per power of two, the layout of
// gputop/buckets.py), plus the off-CPU time of the threads that launch.
// Python defines the full mode (entry + return: durations) or leaves the light mode
// (entry only: gaps between calls), and appends one entry stub per API below;
// `gputop doctor --ebpf-source` prints the result.
//
// The hot path is paid on every kernel launch of the very thread whose jitter is measured,
// so it is kept to the fewest map operations: the call in flight lives in the thread's own
// task storage (no shared hash, no lock; GPUTOP_TASK_STORAGE, kernels that allow it in
// uprobes) and one lookup finds a (process, API)'s count, sum, interval max and every bucket.
#include <uapi/linux/ptrace.h>
#include <linux/sched.h>

#define NBUCKETS 304  // up to 2^40 ns (18 min); longer calls land in the last bucket

#define NESTING 4  // a runtime call that calls the driver: both are timed, inner and outer
// A thread's calls in flight, innermost last; a call whose return never came (longjmp) is
// overwritten by the next one at the top, so a lost return costs one sample, not the stack.
struct call_t { u64 ts_ns[NESTING]; u32 api[NESTING]; u32 depth; u32 registered; };
struct key_t { u32 tgid; u32 api; u32 bucket; };
struct total_t { u32 tgid; u32 api; };
// max_ns[i] is the largest value of interval max_epoch[i]; Python bumps `epoch` at each
// read, so the slot of the interval just ended is no longer written and reads exactly.
struct stats_t {
    u64 count; u64 sum_ns; u64 last_ns;
    u64 max_ns[2]; u64 max_epoch[2];
    u32 buckets[NBUCKETS];  // wraps after 4G calls; Python takes differences modulo 2^32
};

BPF_F_TABLE("hash", struct total_t, struct stats_t, stats, 4096, BPF_F_NO_PREALLOC);
BPF_PERCPU_ARRAY(zero_stats, struct stats_t, 1);  // never written: the initial value
BPF_ARRAY(epoch, u64, 1);
BPF_TABLE("lru_hash", u32, u32, launchers, 16384);         // tid -> tgid of launch threads
BPF_TABLE("lru_hash", u32, u64, switched_out, 16384);      // tid -> when it left the CPU
BPF_HASH(offcpu_hist, struct key_t, u64, 16384);
BPF_HASH(involuntary, u32, u64, 16384);                    // tgid -> preemptions
#ifdef GPUTOP_TASK_STORAGE
BPF_TASK_STORAGE(calls, struct call_t);
#else
// A thread that enters and never returns must not pin an entry forever: an LRU map.
BPF_TABLE("lru_hash", u64, struct call_t, calls_by_tid, 16384);
#endif

static inline u32 bucket_of(u64 v) {
    if (v < 8)
        return (u32)v;
    u32 msb = 0;
    u64 x = v;
    if (x >> 32) { msb += 32; x >>= 32; }
    if (x >> 16) { msb += 16; x >>= 16; }
    if (x >> 8)  { msb += 8;  x >>= 8; }
    if (x >> 4)  { msb += 4;  x >>= 4; }
    if (x >> 2)  { msb += 2;  x >>= 2; }
    if (x >> 1)  { msb += 1; }
    return 8 + (msb - 3) * 8 + (u32)((v >> (msb - 3)) & 7);
}

static inline struct stats_t *stats_of(u32 tgid, u32 api) {
    struct total_t key = {.tgid = tgid, .api = api};
    struct stats_t *s = stats.lookup(&key);
    if (s)
        return s;
    int zero = 0;
    struct stats_t *init = zero_stats.lookup(&zero);
    if (!init)
        return 0;
    // BPF_NOEXIST: when two threads create the entry at once, the second keeps the first's
    // (an update would replace it, and with it a call the first had already counted)
    stats.insert(&key, init);
    return stats.lookup(&key);
}

static inline void account(struct stats_t *s, u64 value_ns) {
    u32 b = bucket_of(value_ns);
    if (b >= NBUCKETS)
        b = NBUCKETS - 1;
    __sync_fetch_and_add(&s->buckets[b], 1);
    __sync_fetch_and_add(&s->count, 1);
    __sync_fetch_and_add(&s->sum_ns, value_ns);
    int zero = 0;
    u64 *e = epoch.lookup(&zero);  // an array lookup: inlined by the verifier, no call
    u64 now_epoch = e ? *e : 0;
    u32 slot = now_epoch & 1;
    // racy by design: two threads ending calls at once may keep the smaller of the two
    if (s->max_epoch[slot] != now_epoch) {
        s->max_epoch[slot] = now_epoch;
        s->max_ns[slot] = value_ns;
    } else if (value_ns > s->max_ns[slot]) {
        s->max_ns[slot] = value_ns;
    }
}

static inline struct call_t *thread_call(u64 id, int create) {
#ifdef GPUTOP_TASK_STORAGE
    struct task_struct *task = (struct task_struct *)bpf_get_current_task_btf();
    return calls.task_storage_get(task, 0, create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
#else
    struct call_t *call = calls_by_tid.lookup(&id);
    if (call || !create)
        return call;
    struct call_t fresh = {};
    calls_by_tid.update(&id, &fresh);
    return calls_by_tid.lookup(&id);
#endif
}

static inline int on_entry(struct pt_regs *ctx, u32 api) {
    u64 id = bpf_get_current_pid_tgid();
    u32 tgid = id >> 32, tid = (u32)id;
    u64 now = bpf_ktime_get_ns();
    struct call_t *call = thread_call(id, 1);
    if (!call)
        return 0;
    if (!call->registered) {  // once per thread: off-CPU time is tracked for launchers only
        launchers.update(&tid, &tgid);
        call->registered = 1;
    }
#ifdef GPUTOP_MODE_FULL
    u32 depth = call->depth;
    if (depth >= NESTING)
        depth = NESTING - 1;
    call->ts_ns[depth] = now;
    call->api[depth] = api;
    call->depth = depth + 1;
#else
    struct stats_t *s = stats_of(tgid, api);
    if (!s)
        return 0;
    u64 last = s->last_ns;
    s->last_ns = now;
    if (last && now > last)
        account(s, now - last);  // light mode: the gap between calls
#endif
    return 0;
}

static inline int on_return(struct pt_regs *ctx) {
    u64 id = bpf_get_current_pid_tgid();
    struct call_t *call = thread_call(id, 0);
    if (!call || call->depth == 0)
        return 0;
    u64 now = bpf_ktime_get_ns();
    u32 depth = call->depth - 1;
    if (depth >= NESTING)
        return 0;
    call->depth = depth;
    u64 started = call->ts_ns[depth];
    if (!started || now <= started)
        return 0;
    struct stats_t *s = stats_of(id >> 32, call->api[depth]);
    if (s)
        account(s, now - started);
    return 0;
}

TRACEPOINT_PROBE(sched, sched_switch) {
    u32 prev = args->prev_pid, next = args->next_pid;
    u64 now = bpf_ktime_get_ns();
    u32 *prev_tgid = launchers.lookup(&prev);
    if (prev_tgid) {
        switched_out.update(&prev, &now);
        if (args->prev_state == 0) {  // still runnable: it was preempted
            u32 tgid = *prev_tgid;
            u64 zero = 0;
            u64 *n = involuntary.lookup_or_try_init(&tgid, &zero);
            if (n)
                __sync_fetch_and_add(n, 1);
        }
    }
    u32 *next_tgid = launchers.lookup(&next);
    if (next_tgid) {
        u64 *out = switched_out.lookup(&next);
        if (out && now > *out) {
            struct key_t key = {.tgid = *next_tgid, .api = 0, .bucket = bucket_of(now - *out)};
            offcpu_hist.increment(key);
            switched_out.delete(&next);
        }
    }
    return 0;
}

/* @STUBS@ */
