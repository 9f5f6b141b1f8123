#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""fault_campaign.py - trials of random collectives with one fault each.

Each trial starts a job of fault_worker ranks (tests/fault_worker.c: random
collectives, blocking and non-blocking, on the job and on a split, every
element checked) and, at a random moment, injects one fault:

  kill, term     SIGKILL / SIGTERM to a random rank
  stop           SIGSTOP to a random rank (SIGKILLed once the others ended)
  exit           a random rank leaves at a random collective without finalize
  rendezvous     rank 0 killed 0-30 ms after it started, during the rendezvous
  link-down      a random host's link cut for good        (emulated hosts only)
  flap           a host's link cut, then restored after 0.2-2 s        (idem)
  crawl          a host's link shaped to 1 Mbit/s                      (idem)

and checks what collie promises (docs/c-api.md, *Errors never hang*):

  - every other rank ends with a named error (COLLIE_ERR_...) or with every
    result exact; a wrong result is never allowed;
  - for the faults that stop a rank or a link for good, each error comes
    within COLLIE_TIMEOUT + 1 s of the fault (times the suite's time multiplier);
  - no rank hangs (one still running 30 s past that is a hang, and killed;
    120 s on a crawling or flapping link, where jobs still move);
  - no process and nothing in /dev/shm is left behind.

Placement: --hosts 4 is one host of 4 ranks; --hosts 2,1,1 puts ranks on
emulated hosts (the namespaces PREFIX-0.. that tests/netns.sh makes, given
as --netns PREFIX), two on the first.  Prints a line per trial, then a table
per fault; exits 1 when any promise broke.  COLLIE_FAULT_KEEP=1 keeps each
trial's rank outputs (/tmp/collie-fault-*), --verbose prints every error that
does not name the lost rank.
"""
import argparse
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

PROCESS_FAULTS = ["kill", "term", "stop", "exit", "rendezvous"]
LINK_FAULTS = ["link-down", "flap", "crawl"]
BOUNDED = {"kill", "term", "stop", "exit", "rendezvous", "link-down"}  # error by timeout + SLACK_S
# What a survivor may take past its deadline to say so: 1 s, times the suite's
# time multiplier (tests/test_util.h's test_time; more under the sanitizers).
SLACK_S = 1.0 * max(1.0, float(os.environ.get("COLLIE_TEST_TIME_MULTIPLIER", "1")))
HANG_AFTER_S = 30.0  # past the bound; a crawling link's jobs still move, slowly:
HANG_AFTER_CRAWL_S = 120.0
LINE = re.compile(r"^rank (\d+) (?:ready at (\d+)|(done)|error (\S+) on (job|split) at (\d+) after \d+: (.*)|(WRONG.*))$")


def quiet(*cmd):
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Job:
    """One trial's ranks: a process each, its output in a file of its own."""

    def __init__(self, args, placement, seed, port):
        self.args, self.seed, self.port = args, seed, port
        self.dir = tempfile.mkdtemp(prefix="collie-fault-")
        self.host_of = [h for h, count in enumerate(placement) for _ in range(count)]
        self.procs = [None] * len(self.host_of)

    def spawn(self, rank, exit_at=None):
        args, host = self.args, self.host_of[rank]
        env = dict(os.environ, COLLIE_RANK=str(rank), COLLIE_SIZE=str(len(self.procs)),
                   COLLIE_TIMEOUT=str(args.timeout), COLLIE_TOKEN="fault-campaign")
        env.pop("COLLIE_FAULT_EXIT_AT", None)
        if exit_at is not None:
            env["COLLIE_FAULT_EXIT_AT"] = str(exit_at)
        cmd = [args.worker, str(args.ops), str(self.seed)]
        if args.netns:
            env["COLLIE_HOST"] = "emulated-%d" % host
            env["COLLIE_ADDR"] = "10.99.0.1:%d" % self.port
            cmd = ["ip", "netns", "exec", "%s-%d" % (args.netns, host)] + cmd
        else:
            env["COLLIE_ADDR"] = "127.0.0.1:%d" % self.port
        with open(os.path.join(self.dir, "rank%d" % rank), "w") as out:
            self.procs[rank] = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT)

    def report(self, rank):
        """The rank's lines that fault_worker.c defines, as match objects."""
        try:
            with open(os.path.join(self.dir, "rank%d" % rank), errors="replace") as f:
                return [m for m in (LINE.match(l.rstrip("\n")) for l in f) if m]
        except OSError:
            return []

    def log(self, rank):
        with open(os.path.join(self.dir, "rank%d" % rank), errors="replace") as f:
            return f.read()[-2000:]

    def wait_ready(self, deadline):
        while time.time() < deadline:
            if all(any(m.group(2) for m in self.report(r)) for r in range(len(self.procs))):
                return True
            if any(p.poll() is not None for p in self.procs):
                return False
            time.sleep(0.005)
        return False

    def close(self):
        for p in self.procs:
            if p and p.poll() is None:
                p.kill()
            if p:
                p.wait()
        if not os.environ.get("COLLIE_FAULT_KEEP"):
            shutil.rmtree(self.dir, ignore_errors=True)


def link(args, host, state):
    quiet("ip", "-n", "%s-%d" % (args.netns, host), "link", "set", "eth0", state)


def shape(args, host, rate):
    ns = "%s-%d" % (args.netns, host)
    if rate:
        quiet("tc", "-n", ns, "qdisc", "replace", "dev", "eth0", "root", "tbf", "rate", rate,
              "burst", "32kb", "latency", "400ms")
    else:
        quiet("tc", "-n", ns, "qdisc", "del", "dev", "eth0", "root")


def calibrate(args, placement, rng):
    """One trial without a fault: it must pass, and says how long a job runs."""
    job = Job(args, placement, rng.randrange(1 << 30), free_port() if not args.netns else 31000)
    start = time.time()
    for r in range(len(job.procs)):
        job.spawn(r)
    codes = [p.wait(timeout=300) for p in job.procs]
    elapsed = time.time() - start
    bad = [r for r, c in enumerate(codes) if c != 0]
    if bad:
        print("the job without a fault failed on rank %d:\n%s" % (bad[0], job.log(bad[0])))
        job.close()
        sys.exit(1)
    job.close()
    return elapsed


def trial(args, placement, fault, rng, run_s, port):
    """Runs one trial; returns (problems, figures): problems empty when every promise held."""
    size = sum(placement)
    job = Job(args, placement, rng.randrange(1 << 30), port)
    nhosts = len(placement)
    target = 0 if fault == "rendezvous" else rng.randrange(size)
    host = rng.randrange(nhosts)
    shm_before = set(os.listdir("/dev/shm"))
    problems, fault_ns, victims = [], None, set()
    try:
        if fault == "rendezvous":
            job.spawn(0)
            for r in range(1, size):
                job.spawn(r)
            time.sleep(rng.uniform(0, 0.03))
            fault_ns = time.time_ns()
            job.procs[0].kill()
            victims = {0}
        else:
            exit_at = rng.randrange(args.ops) if fault == "exit" else None
            for r in range(size):
                job.spawn(r, exit_at if r == target else None)
            if not job.wait_ready(time.time() + 60):
                problems.append("the job did not start: " + job.log(0))
                return problems, {}
            time.sleep(rng.uniform(0, 0.8 * run_s))
            fault_ns = time.time_ns()
            if fault in ("kill", "term", "stop"):
                job.procs[target].send_signal({"kill": signal.SIGKILL, "term": signal.SIGTERM,
                                               "stop": signal.SIGSTOP}[fault])
                victims = {target}
            elif fault == "exit":
                victims = {target}
                while job.procs[target].poll() is None and time.time_ns() - fault_ns < 60e9:
                    time.sleep(0.001)
                fault_ns = time.time_ns()  # it left about now
            elif fault in ("link-down", "flap"):
                link(args, host, "down")
                if fault == "flap":
                    time.sleep(rng.uniform(0.2, 2.0))
                    link(args, host, "up")
            elif fault == "crawl":
                shape(args, host, "1mbit")
        # Every rank but the victims ends: by the bound, or by the hang limit.
        limit_ns = fault_ns + int((args.timeout + SLACK_S) * 1e9)
        figures = {"late_s": 0.0, "survivors": 0, "finished": 0, "errors": 0, "named": 0}
        for r in range(size):
            if r in victims:
                continue
            p = job.procs[r]
            try:
                grace = HANG_AFTER_S if fault in BOUNDED else HANG_AFTER_CRAWL_S
                p.wait(timeout=max(0.0, (limit_ns - time.time_ns()) / 1e9 + grace))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
                problems.append("rank %d hung (killed %.0f s after the fault)" %
                                (r, (time.time_ns() - fault_ns) / 1e9))
                continue
            figures["survivors"] += 1
            lines = job.report(r)
            done = [m for m in lines if m.group(3)]
            errors = [m for m in lines if m.group(4)]
            wrong = [m for m in lines if m.group(8)]
            if wrong:
                problems.append("rank %d: %s" % (r, wrong[0].group(8)))
            elif p.returncode == 0 and done:
                figures["finished"] += 1
            elif p.returncode == 3 and errors and errors[0].group(4).startswith("COLLIE_ERR_") \
                    and errors[0].group(7).strip():
                figures["errors"] += 1
                after_s = (int(errors[0].group(6)) - fault_ns) / 1e9
                figures["late_s"] = max(figures["late_s"], after_s)
                if fault in BOUNDED and after_s > args.timeout + SLACK_S:
                    problems.append("rank %d: its error came %.2f s after the fault (> %g s): %s" %
                                    (r, after_s, args.timeout + SLACK_S, errors[0].group(0)))
                # Messages name ranks of the communicator that failed: on the split, V / 2.
                on_split = errors[0].group(5) == "split"
                if victims and any(re.search(r"\brank %d\b" % (v // 2 if on_split else v),
                                             errors[0].group(7)) for v in victims):
                    figures["named"] += 1
                elif args.verbose:
                    print("  rank %d does not name rank(s) %s: %s" % (r, sorted(victims), errors[0].group(0)))
            else:
                problems.append("rank %d ended with status %s and no named error:\n%s" %
                                (r, p.returncode, job.log(r)))
    finally:
        if fault == "stop":
            job.procs[target].kill()
        if fault in LINK_FAULTS:
            link(args, host, "up")
            shape(args, host, None)
        job.close()
    mine = "^" + re.escape(args.worker) + " "  # the workers' command lines, not this one's
    stray = subprocess.run(["pgrep", "-f", mine], capture_output=True, text=True).stdout.split()
    if stray:
        problems.append("processes left: " + " ".join(stray))
        quiet("pkill", "-9", "-f", mine)
    left = sorted(set(os.listdir("/dev/shm")) - shm_before)
    if left:
        problems.append("left in /dev/shm: " + " ".join(left))
        for name in left:
            try:
                os.unlink(os.path.join("/dev/shm", name))
            except OSError:
                pass
    return problems, figures


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--worker", required=True, help="the fault_worker program")
    ap.add_argument("--trials", type=int, default=50)
    ap.add_argument("--seed", type=int, default=1, help="the campaign's random seed (0: fresh)")
    ap.add_argument("--hosts", default="4", help="ranks per host: 4, or 2,1,1 (emulated hosts)")
    ap.add_argument("--netns", default="", help="the emulated hosts' namespace prefix")
    ap.add_argument("--faults", default="", help="comma-separated kinds (default: all that apply)")
    ap.add_argument("--timeout", type=float, default=2.0, help="COLLIE_TIMEOUT of the jobs")
    ap.add_argument("--ops", type=int, default=600, help="collectives per job")
    ap.add_argument("--verbose", action="store_true", help="print errors that do not name the lost rank")
    args = ap.parse_args()
    args.worker = os.path.abspath(args.worker)
    placement = [int(c) for c in args.hosts.split(",")]
    if len(placement) > 1 and not args.netns:
        ap.error("--hosts %s needs emulated hosts (--netns)" % args.hosts)
    kinds = PROCESS_FAULTS + (LINK_FAULTS if len(placement) > 1 else [])
    if args.faults:
        kinds = args.faults.split(",")
    rng = random.Random(args.seed or None)
    topology = "%d ranks on %s" % (sum(placement), "1 host" if len(placement) == 1 else
                                   "%d hosts (%s)" % (len(placement), args.hosts))
    run_s = calibrate(args, placement, rng)
    print("fault campaign: %s, COLLIE_TIMEOUT=%g s, %d collectives per job (%.2f s without a "
          "fault), %d trials, seed %d" % (topology, args.timeout, args.ops, run_s, args.trials,
                                          args.seed), flush=True)
    table = {k: {"trials": 0, "survivors": 0, "finished": 0, "errors": 0, "named": 0,
                 "late_s": 0.0, "broken": 0} for k in kinds}
    failures = 0
    for t in range(args.trials):
        fault = kinds[t % len(kinds)]
        port = 31001 + t % 20000 if args.netns else free_port()
        problems, figures = trial(args, placement, fault, rng, run_s, port)
        row = table[fault]
        row["trials"] += 1
        for key in ("survivors", "finished", "errors", "named"):
            row[key] += figures.get(key, 0)
        row["late_s"] = max(row["late_s"], figures.get("late_s", 0.0))
        if problems:
            row["broken"] += 1
            failures += 1
            print("trial %d (%s): BROKEN\n  %s" % (t, fault, "\n  ".join(problems)), flush=True)
        else:
            print("trial %d (%s): ok, %d finished, %d named errors, slowest %.2f s after the fault" %
                  (t, fault, figures["finished"], figures["errors"], figures["late_s"]), flush=True)
    print("\n| fault | trials | survivors | finished exact | named errors | naming the lost rank "
          "| slowest error after the fault | broken (hang, wrong, late, left) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for k in kinds:
        r = table[k]
        named = "-" if k in LINK_FAULTS else str(r["named"])  # a link has no lost rank
        print("| %s | %d | %d | %d | %d | %s | %.2f s | %d |" % (
            k, r["trials"], r["survivors"], r["finished"], r["errors"], named, r["late_s"],
            r["broken"]))
    print("fault campaign (%s): %d trials, %d broken" % (topology, args.trials, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
