#!/bin/bash
# bystate.sh DIR: per size, median time of A and B (collie rows) split by state (near < 100 ns <= far)
dir=$1
awk -F, '
  FNR == 1 { split(FILENAME, p, "/"); side = substr(p[length(p)], 1, 1); next }
  { st = ($NF + 0 < 100) ? "near" : "far"; k = $7 " " st; t[$2 "/" side, k] = t[$2 "/" side, k] " " $12; keys[k] = 1; be[$2 "/" side] = 1 }
  function med(s,   n, v, i, j, x) { n = split(s, v, " "); if (!n) return "-"
    for (i = 2; i <= n; i++) { x = v[i]; for (j = i - 1; j >= 1 && v[j] > x; j--) v[j + 1] = v[j]; v[j + 1] = x }
    return sprintf("%.2f(%d)", n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2, n) }
  END { for (k in keys) { line = k; for (b in be) line = line "  " b "=" med(t[b, k]); print line } }' "$dir"/A.*.csv "$dir"/B.*.csv | sort -k1,1n -k2
