/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shm_wait.c - waiting on a one-writer flag in shared memory.
 *
 * Spin briefly (a peer on another core answers in well under a microsecond),
 * then sched_yield (a peer on *this* core gets to run now instead of after
 * the 4 ms scheduler tick a busy-poller would cost it), then sleep on a
 * futex (oversubscribed ranks do not steal cycles from the ones computing).
 * Every phase watches the deadline, the host's abort record and, about ten
 * times a second while sleeping, whether the awaited peer still lives and
 * is not in this very call doing something else.
 *
 * Whether to spin at all is decided per wait, from where the peer is: each
 * rank publishes the CPU it waits on (sched_getcpu, a vDSO read of about
 * 4 ns, stored only when it changes).  A peer on this CPU cannot run until
 * this rank lets it, so the wait yields at once; a peer elsewhere is polled
 * for up to COLLIE_SPIN_US.  A stale value corrects itself at the peer's next
 * wait.  An earlier policy adapted a polling budget to how past waits ended
 * (halve when polling failed, double when it worked): once both ranks of a
 * pair were yielding, each answered the other only after a 0.6 us
 * sched_yield, every wait outlasted the 1 us floor, and a job settled at
 * 2.7 us per 8-byte allreduce instead of 0.3.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../core/log.h"
#include "shm_layout.h"
#include "transport.h"

#define SLEEP_SLICE_NS 100000000ull /* liveness is re-checked this often */
/*
 * Waits in a row that find the peer on this CPU before moving off it.  2, so
 * that a pair merged by a sleep splits within a warm-up's few calls: with 4,
 * the move (27 us) fell in the first timed calls of 23% of a benchmark's
 * sizes, and doubled their mean.
 */
#define MOVE_STREAK 2
/*
 * At most one move per MOVE_GAP_NS.  A move costs about 27 us here (two
 * sched_setaffinity calls and a migration), a call in the shared state about
 * 2 us more than apart: a move pays for itself within 14 calls, and a
 * scheduler that undid every move at once would cost at most 2.7% of the
 * time.  (10 ms, as first set, left a pair merged again by a sleep, e.g.
 * between a benchmark's sizes, merged for the rest of them: 2.4 us per
 * 8-byte allreduce on 2 ranks instead of 0.5.)
 */
#define MOVE_GAP_NS 1000000ull

/* Per thread: where it last found its peers. */
static _Thread_local __attribute__((tls_model("initial-exec"))) struct {
    int shared_streak; /* consecutive waits that found the peer on this CPU */
    uint64_t moved_ns; /* when this thread last moved */
} me;

/* One more in a statistics counter (relaxed: a count, not synchronisation). */
static void bump(_Atomic unsigned long long *c)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
                          memory_order_relaxed);
}

/*
 * Leaves this CPU for another one of the thread's affinity mask: excluding
 * the current CPU from the mask migrates the thread at once, and restoring
 * the mask keeps it where it landed until the scheduler moves it again.  The
 * mask the user set is what it was before.  Returns 1 if it moved.
 */
static int move_off(int here)
{
    cpu_set_t mask, elsewhere;
    if (here < 0 || here >= CPU_SETSIZE || sched_getaffinity(0, sizeof mask, &mask) != 0)
        return 0;
    elsewhere = mask;
    CPU_CLR(here, &elsewhere);
    if (!CPU_COUNT(&elsewhere) || sched_setaffinity(0, sizeof elsewhere, &elsewhere) != 0)
        return 0;
    sched_setaffinity(0, sizeof mask, &mask);
    return 1;
}

/*
 * Whether local rank peer last waited on the CPU this rank runs on now.
 * With a CPU for every rank on the host, a pair that keeps sharing one
 * (measured: the scheduler can leave two ranks that hand a CPU back and
 * forth on one core for a whole run, each operation 10x slower, while the
 * other core idles: both always look cache-hot) is split: the higher rank
 * moves, at most every MOVE_GAP_NS.
 */
static int shares_cpu(struct collie__shm *s, int peer)
{
    int here = sched_getcpu();
    /* The private copy: the control block's line is the one the peers poll. */
    if (here != atomic_load_explicit(&s->cpu, memory_order_relaxed)) {
        atomic_store_explicit(&s->cpu, here, memory_order_relaxed);
        atomic_store_explicit(&s->ctl[s->me].cpu, here, memory_order_relaxed);
    }
    int shared = here >= 0 && atomic_load_explicit(&s->ctl[peer].cpu, memory_order_relaxed) == here;
    me.shared_streak = shared ? me.shared_streak + 1 : 0;
    if (me.shared_streak >= MOVE_STREAK && s->may_move && s->me > peer) {
        uint64_t now = collie__now_ns();
        me.shared_streak = 0;
        if (now - me.moved_ns >= MOVE_GAP_NS && move_off(here)) {
            me.moved_ns = now;
            bump(&s->moves);
        }
    }
    return shared;
}

#if defined(__x86_64__) || defined(__i386__)
#define cpu_relax() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define cpu_relax() __asm__ __volatile__("yield" ::: "memory")
#else
#define cpu_relax() __asm__ __volatile__("" ::: "memory")
#endif

/* Whether f's value has reached target, wrap-safe (an acquire load). */
static inline int reached(struct collie__flag *f, uint32_t target)
{
    return (int32_t)(atomic_load_explicit(&f->value, memory_order_acquire) - target) >= 0;
}

static long futex(_Atomic uint32_t *addr, int op, uint32_t val, const struct timespec *ts)
{
    /* Not FUTEX_PRIVATE: the word is shared between processes. */
    return syscall(SYS_futex, (uint32_t *)addr, op, val, ts, NULL, 0);
}

void collie__flag_post(struct collie__flag *f, uint32_t value)
{
    /*
     * seq_cst store then load: pairs with the waiter's mark-then-recheck.
     * The post that wakes clears the mark: a sender running ahead of a
     * receiver that was woken but has not run yet would otherwise make a
     * futex_wake per message (measured: 8 ranks on 2 cores, 1.6 a 4-byte
     * broadcast, nearly half its time).  A sleeper that must sleep again
     * marks again.
     */
    atomic_store_explicit(&f->value, value, memory_order_seq_cst);
    if (atomic_load_explicit(&f->waiters, memory_order_seq_cst) &&
        atomic_exchange_explicit(&f->waiters, 0, memory_order_seq_cst))
        futex(&f->value, FUTEX_WAKE, INT_MAX, NULL);
}

void collie__flag_wake_all(struct collie__flag *f) { futex(&f->value, FUTEX_WAKE, INT_MAX, NULL); }

/* A zombie still answers kill(pid, 0); its state in /proc/<pid>/stat says 'Z'. */
static int process_gone(pid_t pid)
{
    if (pid <= 0)
        return 0;
    if (kill(pid, 0) == -1 && errno == ESRCH)
        return 1;
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *close_paren = strrchr(buf, ')');
    return close_paren && close_paren[1] == ' ' && (close_paren[2] == 'Z' || close_paren[2] == 'X');
}

collie_status collie__shm_check_abort(collie_comm *comm)
{
    if (!comm->shm)
        return COLLIE_OK;
    struct collie__shm_header *h = comm->shm->hdr;
    uint32_t state = atomic_load_explicit(&h->abort_state, memory_order_acquire);
    if (state == COLLIE_ABORT_NONE)
        return COLLIE_OK;
    /* The aborting rank is writing its message; it takes a few stores. */
    for (int i = 0; i < 1000000 && state != COLLIE_ABORT_SET; i++) {
        sched_yield();
        state = atomic_load_explicit(&h->abort_state, memory_order_acquire);
    }
    if (state != COLLIE_ABORT_SET)
        return collie__fail_from_peer(comm, COLLIE_ERR_INTERNAL, "another rank aborted mid-write");
    return collie__fail_from_peer(comm, (collie_status)h->abort_status, h->abort_msg);
}

/*
 * Fails if the peer has left or died -- unless what we wait for arrived
 * first: a peer may post its last message and leave at once, and reading its
 * state (acquire) makes everything it posted before leaving visible; or a
 * failure was recorded on the host, which is then what this wait reports.
 */
static collie_status check_peer(collie_comm *comm, int peer, const char *what,
                                const struct collie__op_desc *desc, struct collie__flag *f,
                                uint32_t target)
{
    struct collie__rank_ctl *ctl = &comm->shm->ctl[peer];
    int grank = comm->local_to_global[peer];
    uint32_t state = atomic_load_explicit(&ctl->state, memory_order_acquire);
    int gone = state == COLLIE_RANK_LEFT || process_gone(ctl->pid);
    if (!gone || reached(f, target))
        return COLLIE_OK;
    /*
     * A failure recorded before it left is the cause, its leaving only the
     * consequence: this rank may have slept (or lost its CPU) from its last
     * look at the record while the peer failed, finalized and exited
     * (errors.rooted-reduce-root.3: PEER_LOST where MISMATCH was the cause).
     */
    collie_status st = collie__shm_check_abort(comm);
    if (st != COLLIE_OK)
        return st;
    char op[160];
    collie__op_describe(desc, op, sizeof op);
    if (state == COLLIE_RANK_LEFT)
        return collie__fail(comm, COLLIE_ERR_PEER_LOST,
                            "rank %d called collie_finalize while rank %d waited for it (%s) in %s",
                            grank, comm->rank, what, op);
    return collie__fail(comm, COLLIE_ERR_PEER_LOST,
                        "rank %d (pid %d) exited while rank %d waited for it (%s) in %s", grank,
                        (int)ctl->pid, comm->rank, what, op);
}

static collie_status timed_out(collie_comm *comm, int peer, const char *what,
                               const struct collie__op_desc *desc)
{
    char op[160];
    collie__op_describe(desc, op, sizeof op);
    return collie__fail(comm, COLLIE_ERR_TIMEOUT,
                        "rank %d waited %.1f s (COLLIE_TIMEOUT) for rank %d (%s) in %s; that rank "
                        "is alive but did not get there: is it calling something else?",
                        comm->rank, comm->timeout_s, comm->local_to_global[peer], what, op);
}

/* Sleeps until f reaches target; at deadline fails with TIMEOUT, or returns OK if soft. */
static collie_status sleep_until(collie_comm *comm, struct collie__flag *f, uint32_t target,
                                 int peer, const char *what, const struct collie__op_desc *desc,
                                 uint64_t deadline, int soft)
{
    COLLIE_TRACE("shm", "rank %d sleeps waiting for rank %d (%s)", comm->rank,
                 comm->local_to_global[peer], what);
    for (;;) {
        collie_status st = collie__shm_check_abort(comm);
        if (st != COLLIE_OK)
            return st;
        uint64_t now = collie__now_ns();
        if (now >= deadline)
            return soft ? COLLIE_OK : timed_out(comm, peer, what, desc);
        st = check_peer(comm, peer, what, desc, f, target);
        if (st == COLLIE_OK)
            st = collie__shm_judge(comm, peer, desc);
        if (st != COLLIE_OK)
            return st;
        if (reached(f, target))
            return COLLIE_OK;
        uint64_t ns = deadline - now;
        if (ns > SLEEP_SLICE_NS)
            ns = SLEEP_SLICE_NS;
        struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
        atomic_store_explicit(&f->waiters, 1, memory_order_seq_cst);
        uint32_t v = atomic_load_explicit(&f->value, memory_order_seq_cst);
        if ((int32_t)(v - target) < 0)
            futex(&f->value, FUTEX_WAIT, v, &ts);
        if (reached(f, target))
            return COLLIE_OK;
    }
}

collie_status collie__flag_wait(collie_comm *comm, struct collie__flag *f, uint32_t target,
                                int peer, const char *what, const struct collie__op_desc *desc,
                                uint64_t until_ns)
{
    if (reached(f, target))
        return COLLIE_OK;
    struct collie__shm *s = comm->shm;
    uint64_t spin_ns = collie__wait_may_poll() ? s->spin_ns : 0;
    if (spin_ns && shares_cpu(s, peer)) {
        spin_ns = 0;
        bump(&s->waits_shared_cpu);
    }
    uint64_t start = collie__now_ns();
    /* The deadline is per wait: a long collective that keeps moving never times out. */
    uint64_t deadline = until_ns ? until_ns : start + (uint64_t)(comm->timeout_s * 1e9);
    uint64_t spin_end = start + spin_ns, yield_end = spin_end + s->yield_ns, last = start;
    int yielding = spin_ns == 0;
    for (unsigned i = 0;; i++) {
        if (reached(f, target)) {
            bump(yielding ? &s->waits_yielded : &s->waits_polled);
            return COLLIE_OK;
        }
        /* Polling checks the clock every 64 rounds; yielding, every round. */
        if (yielding || (i & 63) == 63) {
            collie_status st = collie__shm_check_abort(comm);
            if (st != COLLIE_OK)
                return st;
            uint64_t now = collie__now_ns();
            if (now >= yield_end || now >= deadline)
                break;
            /*
             * A yield that came back this late handed the CPU to a thread
             * that kept it for a slice (a busy pool beside the ranks): more
             * yields would each cost as much.  Sleep instead: a futex wake
             * preempts such a thread at once.
             */
            if (yielding && now - last > COLLIE__YIELD_LOST_NS) {
                bump(&s->waits_yield_lost);
                break;
            }
            last = now;
            yielding = now >= spin_end;
        }
        if (yielding)
            sched_yield();
        else
            cpu_relax();
    }
    if (until_ns && collie__now_ns() >= deadline)
        return COLLIE_OK; /* a bounded wait that ran out while it polled: the caller goes on */
    bump(&s->waits_slept);
    return sleep_until(comm, f, target, peer, what, desc, deadline, until_ns != 0);
}
