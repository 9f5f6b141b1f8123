# The host-wide model proposed in docs/PERFORMANCE.md (*Reduce at 2 ranks*), as a prototype:
# 2 ranks on 2 cores, allreduce and reduce; prints predicted/measured us and both choices per size.
import math
sync=0.28e-6; slot=262144; cache_bytes=32<<20
core_c, host_c = 70e9, 70e9      # cache: a core alone, the host together
core_m, host_m = 28e9, 29e9      # memory
att, att_m, call = 19e9, 4.7e9, 1.4e-6
def rate(k, resident):
    return min(core_c, host_c/k) if resident else min(core_m, host_m/k)
def t(k, b, res): return b/rate(k,res)
def rounds(s): return max(1, math.ceil(s/slot))
def models(s, n=2):
    res = 2*n*s <= cache_bytes/2*2   # host's buffers (in+out per rank) fit in the cache
    r = {}
    # allreduce oneshot: every rank copies in (2s) and reduces n slots into its output ((n+1)s), all at once
    r['ar.oneshot'] = rounds(s)*sync + t(n, (2+n+1)*s, res)
    # twoshot: in (2s), reduce slice ((n+1)s/n), out (2s) all at once
    r['ar.twoshot'] = 2*rounds(s)*sync + t(n, (2 + (n+1)/n + 2)*s, res)
    calls = 2*(n-1)*math.ceil(s/(4*slot))
    a = att if 2*s*n <= cache_bytes else att_m
    r['ar.direct'] = 2*sync + calls*call + 2*(n-1)*(s/n)/a + t(n, 2*(s/n)*2, res)
    # reduce oneshot: all copy in at once, the root alone reduces
    r['rd.oneshot'] = rounds(s)*sync + t(n, 2*s, res)*0 + t(1, (2+n+1)*s, res)
    r['rd.twoshot'] = 2*rounds(s)*sync + t(n, (2 + (n+1)/n)*s, res) + t(1, 2*s, res)
    r['rd.direct'] = r['ar.direct']
    return {k: v*1e6 for k,v in r.items()}
meas = {'rd.oneshot':[1.86,7.33,18,74,306],'rd.twoshot':[2.42,9.0,27.3,98,424],'rd.direct':[4.95,9.4,27,107,450],
        'ar.oneshot':[3.1,11.4,38.7,152,623],'ar.twoshot':[3.07,11.25,33,125,514],'ar.direct':[5.0,9.43,27.4,107,500]}
sizes=[16384,65536,262144,1<<20,4<<20]
for i,s in enumerate(sizes):
    m=models(s)
    line=" ".join("%s %.1f/%.1f" % (k, m[k], meas[k][i]) for k in sorted(m))
    for c in ('ar','rd'):
        pk=min((k for k in m if k.startswith(c)), key=lambda k:m[k]); mk=min((k for k in meas if k.startswith(c)), key=lambda k:meas[k][i])
        line += "  %s pred %s meas %s" % (c, pk.split('.')[1], mk.split('.')[1])
    print(s, line)
