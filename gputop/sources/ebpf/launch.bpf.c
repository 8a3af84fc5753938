// gputop's eBPF program: host-side duration of CUDA API calls per (process, API), as
// log-linear histograms (8 sub-buckets per power of two, the layout of
// gputop/model/latency.py), plus the off-CPU time of the threads that launch.
// Python defines the full mode (entry + return: durations) or leaves the light mode
// (entry only: gaps between calls), and appends one entry stub per API below;
// `gputop doctor --ebpf-source` prints the result.
#include <uapi/linux/ptrace.h>
#include <linux/sched.h>

struct call_t { u64 ts_ns; u32 api; };
struct key_t { u32 tgid; u32 api; u32 bucket; };
struct total_t { u32 tgid; u32 api; };
struct stats_t { u64 count; u64 sum_ns; u64 max_ns; };

// A thread that enters and never returns must not pin an entry forever: LRU maps.
BPF_TABLE("lru_hash", u64, struct call_t, inflight, 16384);
BPF_TABLE("lru_hash", u64, u64, last_call, 16384);        // light mode: previous entry
BPF_HASH(hist, struct key_t, u64, 65536);
BPF_HASH(totals, struct total_t, struct stats_t, 16384);
BPF_TABLE("lru_hash", u32, u32, launchers, 16384);         // tid -> tgid of launch threads
BPF_TABLE("lru_hash", u32, u64, switched_out, 16384);      // tid -> when it left the CPU
BPF_HASH(offcpu_hist, struct key_t, u64, 16384);
BPF_HASH(involuntary, u32, u64, 16384);                    // tgid -> preemptions

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

static inline void account(u32 tgid, u32 api, u64 value_ns) {
    struct key_t key = {.tgid = tgid, .api = api, .bucket = bucket_of(value_ns)};
    hist.increment(key);
    struct total_t tkey = {.tgid = tgid, .api = api};
    struct stats_t zero = {};
    struct stats_t *s = totals.lookup_or_try_init(&tkey, &zero);
    if (s) {
        __sync_fetch_and_add(&s->count, 1);
        __sync_fetch_and_add(&s->sum_ns, value_ns);
        if (value_ns > s->max_ns)
            s->max_ns = value_ns;  // racy by design: a lost max is refreshed next call
    }
}

static inline int on_entry(struct pt_regs *ctx, u32 api) {
    u64 id = bpf_get_current_pid_tgid();
    u32 tgid = id >> 32, tid = (u32)id;
    u64 now = bpf_ktime_get_ns();
    if (!launchers.lookup(&tid))  // a lookup is cheaper than rewriting the entry every call
        launchers.update(&tid, &tgid);
#ifdef GPUTOP_MODE_FULL
    struct call_t call = {.ts_ns = now, .api = api};
    inflight.update(&id, &call);
#else
    u64 key = ((u64)tgid << 32) | api;
    u64 *last = last_call.lookup(&key);
    if (last && now > *last)
        account(tgid, api, now - *last);  // light mode: the gap between calls
    last_call.update(&key, &now);
#endif
    return 0;
}

static inline int on_return(struct pt_regs *ctx) {
    u64 id = bpf_get_current_pid_tgid();
    struct call_t *call = inflight.lookup(&id);
    if (!call)
        return 0;
    u64 now = bpf_ktime_get_ns();
    if (now > call->ts_ns)
        account(id >> 32, call->api, now - call->ts_ns);
    inflight.delete(&id);
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
