# Which algorithm `collie sim` (the library's defaults, with --set KEY=VALUE over them) picks
# for each row of a sim_validate.sh run, and how its measured time compares with the fastest
# forced one:  python3 choices_eval.py COLLIE VALIDATION_DIR [KEY=VALUE...]
import csv, glob, subprocess, sys, os, tempfile
collie = sys.argv[1]; sv = sys.argv[2]; sets = sys.argv[3:]
sim_csv = os.path.join(tempfile.mkdtemp(), "sim.csv")
tot_same = tot = 0; tot_ratio = []
for n in (2, 4, 8):
    d = f"{sv}/local{n}"
    times = {}
    for f in glob.glob(d + "/*:*.csv"):
        for r in csv.DictReader(open(f)):
            if r["backend"] != "collie": continue
            k = (r["collective"], int(r["bytes"]))
            times.setdefault(k, {})[r["algo"]] = float(r["median_us"])
    args = [collie, "sim", "all", "-b", "4", "-e", "64M", "-f", "16", "--ranks", str(n), "--cores", "2", "--csv", sim_csv]
    for s in sets: args += ["--set", s]
    subprocess.run(args, stdout=subprocess.DEVNULL, check=True)
    same = cnt = 0; worst = []
    for r in csv.DictReader(open(sim_csv)):
        k = (r["coll"], int(r["size"]))
        if k not in times: continue
        t = times[k]; best = min(t.values()); a = r["algo"]
        if a not in t: continue
        cnt += 1; same += t[a] <= best * 1.0000001
        tot_ratio.append(t[a] / best)
        if t[a] > 1.1 * best: worst.append(f"{k[0]}:{k[1]}:{a}={t[a]:.1f}/{min(t,key=t.get)}={best:.1f}")
    tot_same += same; tot += cnt
    print(f"n={n}: same {same}/{cnt}; >10% off: {' '.join(worst)}")
import statistics
print(f"all: same {tot_same}/{tot}, mean chosen/best {statistics.mean(tot_ratio):.3f}, within10% {sum(x<=1.1 for x in tot_ratio)}/{len(tot_ratio)}")
