# Open MPI's time over collie's per collective and size, from `collie bench all ... --baseline mpi` text:
#   python3 ratios.py all_n2.txt all_n4.txt all_n8.txt
import re, sys
for path in sys.argv[1:]:
    coll, tab = None, {}
    for line in open(path):
        m = re.match(r'# collie bench (\w+):', line)
        if m:
            coll = m.group(1)
            continue
        f = line.split()
        if line.startswith('#') or len(f) < 14 or not f[0].isdigit():
            continue
        tab.setdefault(coll, {})[int(f[0])] = float(f[12])
    sizes = sorted({s for c in tab for s in tab[c]})
    print(f"\n{path}: Open MPI's time / collie's (! below 1)")
    print("size".rjust(9), ' '.join(c.rjust(14) for c in tab))
    for s in sizes:
        print(str(s).rjust(9), ' '.join(
            ((f"{tab[c][s]:.2f}" + ('!' if tab[c][s] < 1 else ' ')) if s in tab[c] else '').rjust(14)
            for c in tab))
