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
  python3 scripts/perf_tables.py --self-test  # check how rounds are chosen

Each cell is the median over the rounds of the mean time per call (us).
A size's rounds are those measured at one placement of the two vCPUs:
the fast state (cpu2cpu within 2x of the size's best) where collie and
every peer of the field has one there, else the slow state where each has
one there, else all of them.
"""
import csv
import os
import statistics
import sys
from collections import defaultdict, namedtuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "docs", "results", "perf")
PAGE = os.path.join(ROOT, "docs", "PERFORMANCE.md")

# The order sets appear in, then any others by name.
ORDER = ["one_host_n2", "one_host_n4", "one_host_n8", "floor_n2", "mlbench_n2", "hosts2x2_1gbit", "torch2",
         "ef_train", "ef_torch"]
PEERS = {"mpi": "Open MPI 4.1", "ompi5": "Open MPI 5", "mpich": "MPICH 5", "impi": "Intel MPI",
         "oneccl": "oneCCL", "gloo": "Gloo", "torch": "torch.distributed (Gloo)"}
COLLECTIVES = ["allreduce", "broadcast", "reduce", "allgather", "reduce_scatter", "alltoall"]

INTRO = """\
# Performance

Today's figures only, each beside the peers measured in the same run:
`collie bench` ran the identical loop against every library, rounds
alternated (A B A B), and checked every element of every result. A cell is
the median over the rounds of the mean time per call in microseconds;
`spread` = collie's slowest round less its fastest, over the median; `x` =
the fastest peer's time over collie's (above 1: collie is faster). Sizes
are bytes per rank, as nccl-tests count them (for allgather, reduce_scatter
and alltoall: the whole buffer of n blocks). `cpu2cpu` is how long a cache
line took between the two vCPUs around the row: the host moves them
between cores that share a cache and cores that do not, and every
library's shared-memory figures move with it. The machine and date head
each set.

The goal of a row, beside the fastest of Open MPI 4.1 and 5, MPICH 5,
Intel MPI and oneCCL measured in the same run: collie at least as fast
(1.0), and allreduce of 64 KiB-4 MiB at least 1.3x; from 16 MiB, at least
80% of the memory-traffic floor (`floor`, where `--stream` measured it:
every rank reads its input and writes its output once, 2nS bytes at the
machine's copy bandwidth, over collie's time). A row below its goal says
why, with the measurement that showed it.

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


Cell = namedtuple("Cell", "us algo rounds lo hi")


def same_state(rs, backends):
    """A size's rounds measured at one placement of the two vCPUs, so that every library is
    compared at equal placement: those in the fast state (cpu2cpu within 2x of the size's best)
    where collie and every peer of the field has one there, else those in the slow state where
    each has one there, else all of them.  A library outside the field (Gloo) with no round in
    the state chosen keeps all of its rounds."""
    best = min(float(r["handoff_ns"]) for r in rs)
    need = {b for b in backends if b == "collie" or b in FIELD}
    for in_state in (lambda h: h <= 2 * best, lambda h: h > 2 * best):
        state = [r for r in rs if in_state(float(r["handoff_ns"]))]
        present = {r["backend"] for r in state}
        if need <= present:
            return state + [r for r in rs if r["backend"] not in present]
    return rs


def medians(path):
    """{collective: {bytes: {backend: Cell}}}, {(collective, bytes): cpu2cpu ns}, and
    {(collective, bytes): the memory-traffic floor in us} where `--stream` measured it: the
    median of the rounds used, each backend's fastest and slowest of them."""
    rows = defaultdict(list)
    with open(path) as f:
        for r in csv.DictReader(f):
            rows[(r["collective"], int(r["bytes"]))].append(r)
    out, handoff, floor = defaultdict(dict), {}, {}
    for (coll, size), rs in rows.items():
        backends = {r["backend"] for r in rs}
        fast = same_state(rs, backends)
        cell = {}
        for b in backends:
            times = [float(r["time_us"]) for r in fast if r["backend"] == b]
            algo = next((r["algo"] for r in fast if r["backend"] == b), "")
            cell[b] = Cell(statistics.median(times), algo, len(times), min(times), max(times))
        out[coll][size] = cell
        handoff[(coll, size)] = statistics.median(
            float(r["handoff_ns"]) for r in fast if r["backend"] == "collie" or r["backend"] in FIELD)
        floors = [float(r.get("floor_us") or 0) for r in rs if r["backend"] == "collie"]
        f = statistics.median(floors) if floors else 0
        if f > 0:
            floor[(coll, size)] = f
    return out, handoff, floor


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


# The goal of each row beside the field's fastest MPI and CCL libraries: collie at least as
# fast as the best of them, and allreduce of 64 KiB-4 MiB at least 1.3x.
FIELD = ["mpi", "ompi5", "mpich", "impi", "oneccl"]


# From 16 MiB, collie's share of the memory-traffic floor, where `--stream` measured it.
FLOOR_GOAL = 80


def goal(coll, size):
    return 1.3 if coll == "allreduce" and 64 << 10 <= size <= 4 << 20 else 1.0


class Gaps:
    """NAME.gaps: `collective bytes: why` for a row below its goal, the mechanism measured, or
    `collective lo-hi: why` for every such row of lo to hi bytes (sweeps of many sizes)."""

    def __init__(self, path):
        self.spans = []
        if os.path.exists(path):
            with open(path) as f:
                for line in f:
                    if ":" in line and not line.startswith("#"):
                        key, why = line.split(":", 1)
                        coll, sizes = key.split()
                        lo, _, hi = sizes.partition("-")
                        self.spans.append((coll, int(lo), int(hi or lo), why.strip()))

    def get(self, key):
        coll, size = key
        return next((why for c, lo, hi, why in self.spans if c == coll and lo <= size <= hi), None)


def note(notes, why):
    """The number of `why` among a table's notes, added once however many rows it explains."""
    if why not in notes:
        notes.append(why)
    return notes.index(why) + 1


def spread(c):
    return f"{100 * (c.hi - c.lo) / c.us:.0f}%" if c.rounds > 1 else "-"


def table(coll, cells, peers, handoff, gaps, floor):
    """One collective's rows: collie, each peer, the fastest of the field and its ratio to
    collie, and where the field is in the set, the row's goal and whether it is met; where
    `--stream` measured it, collie's share of the memory-traffic floor."""
    field = [p for p in peers if p in FIELD]
    floors = any(k[0] == coll for k in floor)
    head = "| bytes | collie | spread | algorithm |" + "".join(f" {PEERS.get(p, p)} |" for p in peers)
    head += " fastest peer | x |" + (" goal |" if field else "")
    head += (" floor |" if floors else "") + " cpu2cpu (ns) |"
    lines = [head, "|" + " --- |" * (head.count("|") - 1)]
    notes = []
    for size in sorted(cells):
        c = cells[size]
        if "collie" not in c:
            continue
        mine = c["collie"]
        row = f"| {fmt_bytes(size)} | {fmt_time(mine.us)} | {spread(mine)} | {mine.algo} |"
        row += "".join(f" {fmt_time(c[p].us)} |" if p in c else " - |" for p in peers)
        rivals = [p for p in (field or peers) if p in c]
        if rivals:
            best = min(rivals, key=lambda p: c[p].us)
            x = c[best].us / mine.us
            row += f" {PEERS.get(best, best)} | {fmt_ratio(x)} |"
        else:
            x = None
            row += " - | - |"
        if field:
            want = goal(coll, size)
            if x is None:
                row += " - |"
            elif x >= want:
                row += f" {want:.1f}: met |"
            else:
                why = gaps.get((coll, size))
                if why:
                    row += f" {want:.1f}: **below** ({note(notes, why)}) |"
                elif mine.lo * want <= c[best].us:  # collie's fastest round met the goal
                    row += f" {want:.1f}: **below**, within the spread |"
                else:
                    row += f" {want:.1f}: **below** |"
        if floors:
            f = floor.get((coll, size))
            share = 100 * f / mine.us if f else None
            if share is None:
                row += " - |"
            elif share >= FLOOR_GOAL:
                row += f" {share:.0f}% |"
            elif gaps.get((coll, size)):  # one note for the row, whichever goal it misses
                row += f" {share:.0f}%: **below** ({note(notes, gaps.get((coll, size)))}) |"
            else:
                row += f" {share:.0f}%: **below** |"
        row += f" {handoff[(coll, size)]:.0f} |"
        lines.append(row)
    if notes:
        lines.append("")
        lines.extend(f"({i}) {why}" for i, why in enumerate(notes, 1))
    return lines


def rounds_note(data):
    counts = defaultdict(set)
    for cells in data.values():
        for c in cells.values():
            for b, cell in c.items():
                counts[b].add(cell.rounds)
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


# scripts/bench_ef.sh: the gradients' forms, and the bytes of one float32 element on the wire
EF_FORMS = {"none": ("float32", 4.0), "bfloat16": ("bfloat16", 2.0),
            "int8-ef": ("int8-EF", 4.0 * 260 / 1024), "sign-ef": ("sign-EF", 4.0 * 36 / 1024)}
EF_TARGETS = (0.85, 0.88)


def ef_train_table(path):
    """Time to accuracy per gradient form and link rate: the epochs each needed, the time
    since the start, float32's time over this form's, and the bytes sent per epoch."""
    runs = defaultdict(list)
    with open(path) as f:
        for r in csv.DictReader(f):
            runs[(int(r["hosts"]), r["rate"], r["compress"])].append(r)
    lines = []
    for hosts in sorted({k[0] for k in runs}):
        lines += [f"**{hosts} hosts, one rank each**\n",
                  "| link | gradients | epochs to 0.85 / 0.88 | time to 0.85 / 0.88 (s) | "
                  "x float32 to 0.88 | bytes per epoch: counted / formula |",
                  "| --- | --- | --- | --- | --- | --- |"]
        for rate in sorted({k[1] for k in runs if k[0] == hosts}, key=lambda r: "mbit" in r):
            base = None
            for form, (label, width) in EF_FORMS.items():
                rows = runs.get((hosts, rate, form))
                if not rows:
                    continue
                reach = [next((r for r in rows if float(r["test_accuracy"]) >= t), None)
                         for t in EF_TARGETS]
                epochs = " / ".join(r["epoch"] if r else "-" for r in reach)
                times = " / ".join(f"{float(r['wall_s']):.1f}" if r else "-" for r in reach)
                to_last = float(reach[1]["wall_s"]) if reach[1] else None
                if form == "none":
                    base = to_last
                ratio = f"{base / to_last:.2f}" if base and to_last else "-"
                if not reach[1]:
                    best = max(float(r["test_accuracy"]) for r in rows)
                    ratio = f"- (best {best:.4f} in {len(rows)} epochs)"
                r0 = rows[0]
                formula = (2 * (hosts - 1) / hosts * int(r0["parameters"]) * width *
                           int(r0["steps_per_epoch"]))
                link = rate.replace("gbit", " Gbit/s").replace("mbit", " Mbit/s")
                lines.append(f"| {link} | {label} | {epochs} | {times} | {ratio} | "
                             f"{float(r0['bytes_per_epoch']):.3g} / {formula:.3g} |")
        lines.append("")
    return lines


EF_TORCH_MODES = [("gloo-powersgd", "PowerSGD on Gloo"), ("collie-fp16", "collie fp16"),
                  ("collie-int8-ef", "collie int8-EF"), ("collie-sign-ef", "collie sign-EF"),
                  ("compute", "no communication (the bound)")]


def ef_torch_table(path):
    """acc_ratio against DDP on Gloo per way of communicating, medians over the runs."""
    runs = defaultdict(list)
    with open(path) as f:
        for r in csv.DictReader(f):
            runs[(r["setting"], r["mode"])].append(r)
    settings = sorted({k[0] for k in runs}, key=lambda s: ("Mbit" in s, s))
    lines = ["| setting | Gloo img/s | " + " | ".join(m[1] for m in EF_TORCH_MODES) +
             " | int8-EF of the bound |",
             "| --- | --- |" + " --- |" * (len(EF_TORCH_MODES) + 1)]
    for setting in settings:
        gloo = runs.get((setting, "gloo"))
        if not gloo:
            continue
        cells, ratio = [], {}
        for mode, _ in EF_TORCH_MODES:
            mine = runs.get((setting, mode))
            if not mine:
                cells.append("-")
                continue
            ratio[mode] = med(mine, "acc_ratio")
            ratios = [float(r["acc_ratio"]) for r in mine]
            cells.append(f"{ratio[mode]:.2f}" +
                         (f" ({min(ratios):.2f}-{max(ratios):.2f})" if len(ratios) > 1 else ""))
        bound = (f"{100 * ratio['collie-int8-ef'] / ratio['compute']:.0f}%"
                 if "collie-int8-ef" in ratio and "compute" in ratio else "-")
        lines.append(f"| {setting} | {med(gloo, 'img_sec'):.1f} | " + " | ".join(cells) +
                     f" | {bound} |")
    return lines


def sets():
    names = [f[:-4] for f in os.listdir(RESULTS) if f.endswith(".csv")]
    return sorted(names, key=lambda n: (ORDER.index(n) if n in ORDER else len(ORDER), n))


CPU_WORDS = ("Xeon", "EPYC", "Ryzen", "Core(TM)", "Neoverse")


def cpu_of(name, meta):
    """The CPU model the set's rows name (their `cpu` column), or None where they name none.
    Such a set's .meta must not name one: the machine a table was measured on is the rows'
    (two sets once said Intel Xeon above rows measured on an AMD EPYC)."""
    with open(os.path.join(RESULTS, name + ".csv")) as f:
        rows = csv.DictReader(f)
        if "cpu" not in (rows.fieldnames or []):
            return None
        names = sorted({r["cpu"] for r in rows if r["cpu"]})
    if any(w in meta["machine"] for w in CPU_WORDS):
        sys.exit(f"perf_tables: {name}.meta names a CPU in its 'machine:' line; its rows name "
                 f"theirs ({', '.join(names)}): drop it from the .meta")
    return " and ".join(n.replace("(R)", "").replace("(TM)", "") for n in names) or None


def heading(name, meta, rounds=""):
    """A set's title, machine (its rows' CPU first), date, command (and its rounds), and its
    note."""
    cpu = cpu_of(name, meta)
    machine = f"{cpu}, {meta['machine']}" if cpu else meta["machine"]
    lines = [f"## {meta['title']}\n",
             f"{machine}, {meta['date']}. Command: `{meta['command']}` "
             f"(rows: `docs/results/perf/{name}.csv`).{rounds}"]
    if meta.get("note"):
        lines.append(meta["note"])
    return lines + [""]


def page():
    out = [INTRO]
    for name in sets():
        meta = read_meta(os.path.join(RESULTS, name + ".meta"))
        special = {"ef_train": ef_train_table, "ef_torch": ef_torch_table}.get(name)
        if special:
            out.extend(heading(name, meta))
            out.extend(special(os.path.join(RESULTS, name + ".csv")))
            out.append("")
            continue
        if is_torch(os.path.join(RESULTS, name + ".csv")):
            out.extend(heading(name, meta))
            out.extend(torch_table(os.path.join(RESULTS, name + ".csv")))
            out.append("")
            continue
        data, handoff, floor = medians(os.path.join(RESULTS, name + ".csv"))
        gaps = Gaps(os.path.join(RESULTS, name + ".gaps"))
        seen = {b for cells in data.values() for c in cells.values() for b in c} - {"collie"}
        peers = sorted(seen, key=lambda b: (list(PEERS).index(b) if b in PEERS else len(PEERS), b))
        out.extend(heading(name, meta, " " + rounds_note(data)))
        for coll in COLLECTIVES + sorted(set(data) - set(COLLECTIVES)):
            if coll not in data:
                continue
            out.append(f"**{coll}**\n")
            out.extend(table(coll, data[coll], peers, handoff, gaps, floor))
            out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def readme():
    """The README's headline: allreduce at 2 ranks beside the field's fastest libraries."""
    cells = medians(os.path.join(RESULTS, "one_host_n2.csv"))[0]["allreduce"]
    peers = ["impi", "oneccl", "ompi5", "mpi", "gloo"]
    head = "| bytes | collie |" + "".join(f" {PEERS[p]} |" for p in peers) + " x, fastest |"
    lines = [head, "|" + " --- |" * (head.count("|") - 1)]
    for size in sorted(cells):
        c = cells[size]
        mine = c["collie"].us
        best = min((p for p in FIELD if p in c), key=lambda p: c[p].us)
        lines.append(f"| {fmt_bytes(size)} | {fmt_time(mine)} |" +
                     "".join(f" {fmt_time(c[p].us)} |" for p in peers) +
                     f" {fmt_ratio(c[best].us / mine)} |")
    return "\n".join(lines) + "\n"


def self_test():
    """same_state's choices on rounds made up for it: 1 where one is wrong."""
    def rounds(spec):  # "backend:handoff:time ..."
        return [dict(zip(("backend", "handoff_ns", "time_us"), w.split(":"))) for w in spec.split()]

    def chosen(spec):
        rs = rounds(spec)
        return sorted(f'{r["backend"]}:{r["handoff_ns"]}' for r in same_state(rs, {r["backend"] for r in rs}))

    cases = [  # every library fast at least once: the fast rounds, and Gloo's slow ones if it has no fast
        ("collie:40:1 collie:160:3 impi:45:2 impi:170:4 gloo:165:9",
         ["collie:40", "gloo:165", "impi:45"]),
        # a peer of the field slow in every round: all at the slow state, never collie fast against it slow
        ("collie:40:1 collie:160:3 collie:170:3 ompi5:165:2 impi:45:2 impi:170:4",
         ["collie:160", "collie:170", "impi:170", "ompi5:165"]),
        # no state holds every library: all of the rounds
        ("collie:40:1 ompi5:165:2", ["collie:40", "ompi5:165"]),
    ]
    bad = 0
    for spec, want in cases:
        got = chosen(spec)
        if got != sorted(want):
            print(f"perf_tables: same_state({spec!r}) chose {got}, want {sorted(want)}", file=sys.stderr)
            bad = 1
    return bad


def main():
    if "--self-test" in sys.argv:
        return self_test()
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
