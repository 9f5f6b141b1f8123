#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes docs/PERFORMANCE.md from the CSVs `collie bench --csv` (and, for the
PyTorch table, scripts/bench_torch.sh) wrote.

Every table set is a CSV under docs/results/perf/ with a .meta beside it
(`key: value` lines: title, command, machine, date, and optional note).
A re-measurement replaces the CSV and its .meta, and this script
regenerates the page: the page holds today's figures only.

  python3 scripts/perf_tables.py            # rewrite docs/PERFORMANCE.md
  python3 scripts/perf_tables.py --check    # exit 1 if the page is stale
  python3 scripts/perf_tables.py --readme   # print the README's headline table

Each cell is the median over the rounds of the mean time per call (us).
As `collie bench` does, a size's rounds are those measured in the
machine's fast state (cpu2cpu within 2x of the size's best) where every
library has one there, else all of them.
"""
import csv
import os
import statistics
import sys
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "docs", "results", "perf")
PAGE = os.path.join(ROOT, "docs", "PERFORMANCE.md")

# The order sets appear in, then any others by name.
ORDER = ["one_host_n2", "one_host_n4", "one_host_n8", "hosts2x2_1gbit", "torch2"]
PEERS = {"impi": "Intel MPI", "ompi5": "Open MPI 5", "mpich": "MPICH", "mpi": "Open MPI 4.1",
         "gloo": "Gloo", "torch": "torch.distributed (Gloo)"}
COLLECTIVES = ["allreduce", "broadcast", "reduce", "allgather", "reduce_scatter", "alltoall"]

INTRO = """\
# Performance

Today's figures only, each beside the peers measured in the same run:
`collie bench` ran the identical loop against every library, rounds
alternated (A B A B), and checked every element of every result. A cell is
the median over the rounds of the mean time per call in microseconds;
`x` = the peer's time over collie's (above 1: collie is faster). Sizes are
bytes per rank as the API takes them (for allgather, reduce_scatter and
alltoall: one block). The machine and date head each set.

This page is generated: `python3 scripts/perf_tables.py` rewrites it from
the CSVs in `docs/results/perf/` (each with a `.meta` naming its command,
machine and date), so a re-measurement replaces a table. How to measure is
in [bench.md](bench.md); what the figures taught us, in
[NOTES.md](NOTES.md).
"""


def read_meta(path):
    meta = {}
    with open(path) as f:
        for line in f:
            if ":" in line and not line.startswith("#"):
                key, value = line.split(":", 1)
                meta[key.strip()] = value.strip()
    for key in ("title", "command", "machine", "date"):
        if key not in meta:
            sys.exit(f"perf_tables: {path} has no '{key}:' line")
    return meta


def medians(path):
    """{collective: {bytes: {backend: (median_us, algo)}}} and the round counts."""
    rows = defaultdict(list)
    with open(path) as f:
        for r in csv.DictReader(f):
            rows[(r["collective"], int(r["bytes"]))].append(r)
    out = defaultdict(dict)
    for (coll, size), rs in rows.items():
        best = min(float(r["handoff_ns"]) for r in rs)
        fast = [r for r in rs if float(r["handoff_ns"]) <= 2 * best]
        backends = {r["backend"] for r in rs}
        if {r["backend"] for r in fast} != backends:
            fast = rs
        cell = {}
        for b in backends:
            times = [float(r["time_us"]) for r in fast if r["backend"] == b]
            algo = next((r["algo"] for r in fast if r["backend"] == b), "")
            cell[b] = (statistics.median(times), algo, len(times))
        out[coll][size] = cell
    return out


def fmt_time(us):
    if us >= 100:
        return f"{us:,.0f}"
    if us >= 10:
        return f"{us:.1f}"
    return f"{us:.2f}"


def fmt_ratio(x):
    return f"{x:,.0f}" if x >= 100 else f"{x:.1f}" if x >= 10 else f"{x:.2f}"


def fmt_bytes(n):
    for unit, scale in (("Mi", 1 << 20), ("Ki", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return str(n)


def table(cells, peers):
    head = "| bytes | collie | algorithm |" + "".join(f" {PEERS.get(p, p)} | x |" for p in peers)
    rule = "| --- | --- | --- |" + " --- | --- |" * len(peers)
    lines = [head, rule]
    for size in sorted(cells):
        c = cells[size]
        if "collie" not in c:
            continue
        mine, algo, _ = c["collie"]
        row = f"| {fmt_bytes(size)} | {fmt_time(mine)} | {algo} |"
        for p in peers:
            if p in c:
                row += f" {fmt_time(c[p][0])} | {fmt_ratio(c[p][0] / mine)} |"
            else:
                row += " - | - |"
        lines.append(row)
    return lines


def rounds_note(data):
    counts = defaultdict(set)
    for cells in data.values():
        for c in cells.values():
            for b, (_, _, n) in c.items():
                counts[b].add(n)
    parts = []
    for b in sorted(counts, key=lambda b: (b != "collie", b)):
        lo, hi = min(counts[b]), max(counts[b])
        parts.append(f"{PEERS.get(b, b)} {lo}" + (f"-{hi}" if hi != lo else ""))
    return "Rounds per cell: " + ", ".join(parts) + "."


# scripts/bench_torch.sh's modes: what each trains, and the mode it is measured against
TORCH_MODES = {"collie": ("DDP", "gloo"), "collie-bf16": ("DDP, collie's bf16 hook", "gloo"),
               "fsdp2": ("FSDP2", "fsdp2-gloo")}


def is_torch(path):
    with open(path) as f:
        return f.readline().startswith("setting,")


def med(rows, key):
    return statistics.median(float(r[key]) for r in rows)


def torch_table(path):
    """DDP and FSDP2 on collie against the same on Gloo: img/s and acc_ratio (the median of
    the per-iteration ratios of each run), medians over the runs, with their range."""
    runs = defaultdict(list)
    with open(path) as f:
        for r in csv.DictReader(f):
            runs[(r["setting"], r["model"], r["mode"])].append(r)
    lines = ["| setting | model | training | Gloo img/s | collie img/s | acc_ratio | "
             "runs: range | communication share, Gloo / collie |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    keys = sorted({(k[0], k[1]) for k in runs}, key=lambda k: (not k[0].startswith("one"), k))
    for setting, model in keys:
        for mode, (label, base) in TORCH_MODES.items():
            mine, theirs = runs.get((setting, model, mode)), runs.get((setting, model, base))
            if not mine or not theirs:
                continue
            ratios = [float(r["acc_ratio"]) for r in mine]
            lines.append(
                f"| {setting} | {model} | {label} | {med(theirs, 'img_sec'):.1f} | "
                f"{med(mine, 'img_sec'):.1f} | {statistics.median(ratios):.2f} | "
                f"{min(ratios):.2f}-{max(ratios):.2f} ({len(ratios)}) | "
                f"{100 * med(theirs, 'comm_share'):.0f}% / {100 * med(mine, 'comm_share'):.0f}% |")
    return lines


def sets():
    names = [f[:-4] for f in os.listdir(RESULTS) if f.endswith(".csv")]
    return sorted(names, key=lambda n: (ORDER.index(n) if n in ORDER else len(ORDER), n))


def heading(name, meta, rounds=""):
    """A set's title, machine, date, command (and its rounds), and its note."""
    lines = [f"## {meta['title']}\n",
             f"{meta['machine']}, {meta['date']}. Command: `{meta['command']}` "
             f"(rows: `docs/results/perf/{name}.csv`).{rounds}"]
    if meta.get("note"):
        lines.append(meta["note"])
    return lines + [""]


def page():
    out = [INTRO]
    for name in sets():
        meta = read_meta(os.path.join(RESULTS, name + ".meta"))
        if is_torch(os.path.join(RESULTS, name + ".csv")):
            out.extend(heading(name, meta))
            out.extend(torch_table(os.path.join(RESULTS, name + ".csv")))
            out.append("")
            continue
        data = medians(os.path.join(RESULTS, name + ".csv"))
        seen = {b for cells in data.values() for c in cells.values() for b in c} - {"collie"}
        peers = sorted(seen, key=lambda b: (list(PEERS).index(b) if b in PEERS else len(PEERS), b))
        out.extend(heading(name, meta, " " + rounds_note(data)))
        for coll in COLLECTIVES + sorted(set(data) - set(COLLECTIVES)):
            if coll not in data:
                continue
            out.append(f"**{coll}**\n")
            out.extend(table(data[coll], peers))
            out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def readme():
    """The README's headline: allreduce at 2 and 4 ranks beside Open MPI and Gloo."""
    two = medians(os.path.join(RESULTS, "one_host_n2.csv"))["allreduce"]
    four = medians(os.path.join(RESULTS, "one_host_n4.csv"))["allreduce"]
    peers = ["mpi", "gloo"]
    head = "| bytes |" + "".join(
        f" {n} ranks: collie |" + "".join(f" {PEERS[p]} | x |" for p in peers) for n in (2, 4))
    lines = [head, "| --- |" + " --- |" * (2 * (1 + 2 * len(peers)))]
    for size in sorted(two):
        row = f"| {fmt_bytes(size)} |"
        for cells in (two, four):
            mine = cells[size]["collie"][0]
            row += f" {fmt_time(mine)} |"
            for p in peers:
                t = cells[size][p][0]
                row += f" {fmt_time(t)} | {fmt_ratio(t / mine)} |"
        lines.append(row)
    return "\n".join(lines) + "\n"


def main():
    if "--readme" in sys.argv:
        sys.stdout.write(readme())
        return 0
    text = page()
    if "--check" in sys.argv:
        with open(PAGE) as f:
            if f.read() != text:
                print("perf_tables: docs/PERFORMANCE.md differs from its CSVs: "
                      "run python3 scripts/perf_tables.py", file=sys.stderr)
                return 1
        return 0
    with open(PAGE, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
