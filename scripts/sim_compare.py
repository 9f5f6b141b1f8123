#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""sim_compare.py - `collie sim` against `collie bench`, row by row.

    sim_compare.py LABEL MEASURED.csv PREDICTED.csv [FORCED.csv ...]
    sim_compare.py --summary VALIDATION.csv
    sim_compare.py --across VALIDATION.csv VALIDATION.csv ...

MEASURED.csv is `collie bench --csv` of the library's own choices,
PREDICTED.csv `collie sim --csv` for the same machine and sizes, each
FORCED.csv a bench run with one algorithm forced (--algo); a file may hold
several rounds of the same rows (sim_validate.sh alternates them), taken by
their median. Prints one line per row: the measured median per operation, the
prediction, the error, and for the collectives that have a choice, whether the
algorithm the model picks is the fastest measured, and whether it measured
within 10% of the fastest (a tie that the machine's noise decides; "-" where
the model's pick was not measured), and the machine's state in which the row
was measured: "far" where any of its runs (a file's rounds: their median) found
a cache line's trip between two CPUs (the bench's handoff_ns) over twice the
best of the configuration's rows, the placement in which the vCPUs share no
cache (docs/NOTES.md); else "near", the rates the model predicts with;
"-" where the CSVs carry no handoff. Appends machine-readable rows to
$SIM_VALIDATION if set; --summary reads them back: per configuration, the rows
within the goals (15% at >= 64 KiB, 30% below) and how often the model's choice
was the fastest measured, or within 10%; again over the rows measured near,
where any row was measured far. --across reads several runs' validation files:
per configuration, how many rows measured the same algorithm fastest in every
run, and how often the model chose it in each; then how often one run's
measured time is within the goals of another's, beside the model's errors
over the same rows: the bound the machine's own repeatability sets.
"""
import csv
import os
import statistics
import sys


def rows(path, key_cols):
    """One row per key: where a file holds several rounds of it, their medians
    of median_us and handoff_ns (the state most of them ran in), and the
    algorithm most of them ran."""
    runs = {}
    with open(path) as f:
        for r in csv.DictReader(f):
            runs.setdefault(tuple(r[c] for c in key_cols), []).append(r)
    out = {}
    for key, rs in runs.items():
        r = dict(rs[-1])
        if "median_us" in r:
            r["median_us"] = str(statistics.median(float(x["median_us"]) for x in rs))
        if r.get("handoff_ns"):
            r["handoff_ns"] = str(statistics.median(float(x["handoff_ns"] or 0) for x in rs))
        if "algo" in r:
            algos = [x["algo"] for x in rs]
            r["algo"] = max(algos, key=algos.count)
        out[key] = r
    return out


def summary(path):
    rows = list(csv.DictReader(open(path)))
    print("# %-18s %5s  %-28s %-28s %-12s %s" % ("config", "rows", "|error| <= 15% at >= 64 KiB",
                                                 "|error| <= 30% below", "same choice",
                                                 "within 10%"))
    configs = [(c, None) for c in sorted({r["config"] for r in rows}) + ["all"]]
    if any(r.get("state") == "far" for r in rows):
        configs += [(c, "near") for c, _ in configs]
    for cfg, state in configs:
        sel = [r for r in rows if (cfg == "all" or r["config"] == cfg) and
               (state is None or r.get("state") == state)]
        if state:
            cfg = "%s, near" % cfg
        big = [abs(float(r["error"])) for r in sel if int(r["size"]) >= 65536]
        small = [abs(float(r["error"])) for r in sel if int(r["size"]) < 65536]
        same = [r["same"] for r in sel if r["same"] != "-"]
        near = [r.get("near", "-") for r in sel if r.get("near", "-") != "-"]

        def within(v, lim):
            if not v:
                return "-"
            return "%d/%d (median %.0f%%)" % (sum(x <= lim for x in v), len(v),
                                              100 * statistics.median(v))
        print("  %-18s %5d  %-28s %-28s %-12s %s" % (
            cfg, len(sel), within(big, 0.15), within(small, 0.30),
            "%d/%d" % (same.count("yes"), len(same)) if same else "-",
            "%d/%d" % (near.count("yes"), len(near)) if near else "-"))


def across(paths):
    """Several runs' validation files: per configuration, the rows with a
    choice whose fastest measured algorithm is the same in every run (the
    machine's noise decides the others), and of those, the rows where the
    model's choice is that one in every run."""
    runs = [{(r["config"], r["coll"], r["size"]): r for r in csv.DictReader(open(p))}
            for p in paths]
    keys = [k for k in runs[0] if runs[0][k]["same"] != "-" and all(k in run for run in runs)]
    print("# %-18s %5s  %-22s %s" % ("config", "rows", "fastest in every run",
                                      "the model's choice, there"))
    for cfg in sorted({k[0] for k in keys}) + ["all"]:
        sel = [k for k in keys if cfg == "all" or k[0] == cfg]
        stable = [k for k in sel if len({run[k]["fastest"] for run in runs}) == 1]
        right = [k for k in stable if all(run[k]["sim_algo"] == run[k]["fastest"] for run in runs)]
        print("  %-18s %5d  %-22s %s" % (cfg, len(sel), "%d/%d" % (len(stable), len(sel)),
                                         "%d/%d" % (len(right), len(stable))))
    reruns(runs)


def reruns(runs):
    """The goals' bound for the measurement itself: each run's measured time
    taken as the prediction of every other run's, over the rows in all of
    them (within 15% at >= 64 KiB, 30% below, as the model's error), beside
    the model's own errors over the same rows.  A model can match a rerun of
    its measurement only as closely as the machine repeats."""
    keys = [k for k in runs[0] if all(k in run for run in runs)]
    print("# %-18s %5s  %-16s %-16s %-16s %s" % ("config", "rows", "rerun >= 64 KiB",
                                                 "model >= 64 KiB", "rerun below",
                                                 "model below"))

    def share(hits):
        return "%d/%d (%.0f%%)" % (sum(hits), len(hits), 100 * sum(hits) / len(hits)) \
            if hits else "-"
    for cfg in sorted({k[0] for k in keys}) + ["all"]:
        cols = []
        for big in (True, False):
            lim = 0.15 if big else 0.30
            sel = [k for k in keys if (cfg == "all" or k[0] == cfg) and
                   (int(k[2]) >= 65536) == big]
            rerun = [abs(float(a[k]["measured_us"]) / float(b[k]["measured_us"]) - 1) <= lim
                     for k in sel for a in runs for b in runs if a is not b]
            model = [abs(float(run[k]["error"])) <= lim for k in sel for run in runs]
            cols += [share(rerun), share(model)]
        count = len([k for k in keys if cfg == "all" or k[0] == cfg])
        print("  %-18s %5d  %-16s %-16s %-16s %s" % (cfg, count, *cols))


def main():
    if sys.argv[1] == "--summary":
        return summary(sys.argv[2])
    if sys.argv[1] == "--across":
        return across(sys.argv[2:])
    label, measured, predicted, forced = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    bench = rows(measured, ("collective", "bytes"))
    sim = rows(predicted, ("coll", "size"))
    # the fastest measured algorithm per row, over the forced runs and the library's own
    fastest, times = {}, {}
    for path in [measured] + forced:
        for key, r in rows(path, ("collective", "bytes")).items():
            t = float(r["median_us"])
            if key not in fastest or t < fastest[key][0]:
                fastest[key] = (t, r["algo"])
            algo_t = times.setdefault(key, {})
            algo_t[r["algo"]] = min(t, algo_t.get(r["algo"], t))
    choices = {k for path in forced for k in rows(path, ("collective", "bytes"))}
    # the largest handoff each row was measured at, over its runs (each the median of its rounds)
    handoff = {}
    for path in [measured] + forced:
        for key, r in rows(path, ("collective", "bytes")).items():
            if r.get("handoff_ns"):
                handoff[key] = max(float(r["handoff_ns"]), handoff.get(key, 0.0))
    best = min((h for h in handoff.values() if h > 0), default=0.0)

    def state(key):
        if not best or key not in handoff:
            return "-"
        return "far" if handoff[key] > 2 * best else "near"
    out = open(os.environ["SIM_VALIDATION"], "a") if os.environ.get("SIM_VALIDATION") else None
    print("# %s: measured = collie bench median per operation (us); predicted = collie sim" % label)
    print("# %-15s %10s %12s %12s %8s  %-13s %-13s %-4s %-10s %s" % (
        "coll", "size(B)", "measured", "predicted", "error", "sim_algo", "fastest", "same",
        "within 10%", "state"))
    for (coll, size), b in sorted(bench.items(), key=lambda kv: (kv[0][0], int(kv[0][1]))):
        p = sim.get((coll, size))
        if p is None:
            continue
        m, t = float(b["median_us"]), float(p["time_us"])
        err = (t - m) / m
        same = near = "-"
        if (coll, size) in choices:
            same = "yes" if fastest[(coll, size)][1] == p["algo"] else "no"
            t_sim = times[(coll, size)].get(p["algo"])
            if t_sim is not None:
                near = "yes" if t_sim <= 1.10 * fastest[(coll, size)][0] else "no"
        print("  %-15s %10s %12.2f %12.2f %+7.0f%%  %-13s %-13s %-4s %-10s %s" % (
            coll, size, m, t, 100 * err, p["algo"], fastest[(coll, size)][1], same, near,
            state((coll, size))))
        if out:
            out.write("%s,%s,%s,%.4f,%.4f,%.4f,%s,%s,%s,%s,%s\n" % (
                label, coll, size, m, t, err, p["algo"], fastest[(coll, size)][1], same, near,
                state((coll, size))))


if __name__ == "__main__":
    main()
