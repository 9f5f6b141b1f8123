import collections,statistics,sys
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    f=l.split()
    if len(f)<7 or not f[3].isdigit(): continue
    r,c,b,s,t,cpu,a=f[:7]
    d[(c,int(s),b)].append((float(t),a,cpu))
colls=[]
for k in d:
    if k[0] not in colls: colls.append(k[0])
for c in colls:
    for s in sorted({k[1] for k in d if k[0]==c}):
        o=d[(c,s,'old')]; n=d[(c,s,'new')]
        ratios=[x[0]/y[0] for x,y in zip(o,n)]
        print(f"{c:15s} {s:9d} old {statistics.median([x[0] for x in o]):9.1f} new {statistics.median([x[0] for x in n]):9.1f} old/new {statistics.median(ratios):5.2f} ({min(ratios):.2f}-{max(ratios):.2f}) {n[0][1]:9s} cpu2cpu {','.join(x[2] for x in o+n)}")
