import collections,statistics,sys
d={}
for l in open(sys.argv[1]):
    f=l.split()
    if len(f)!=6 or not f[3].isdigit(): continue
    r,c,a,s,t,cpu=f
    try: h=float(cpu.rstrip('*'))
    except ValueError: continue
    d[(c,int(s),a,r)]=(float(t),'far' if h>150 else 'mid')
A,B=sys.argv[2],sys.argv[3]
for c in ['allreduce','reduce','broadcast','allgather','reduce_scatter','alltoall']:
    for s in (65536,262144,1048576,4194304):
        out=[]
        for st in ('mid','far'):
            rs=[d[(c,s,A,r)][0]/d[(c,s,B,r)][0] for r in '123456789' if (c,s,A,r) in d and (c,s,B,r) in d and d[(c,s,A,r)][1]==st and d[(c,s,B,r)][1]==st]
            out.append(f"{st}: " + (f"{statistics.median(rs):.2f} ({min(rs):.2f}-{max(rs):.2f}, {len(rs)})" if rs else "-"))
        print(f"{c:15s} {s:8d} {A}/{B}  " + '   '.join(out))
