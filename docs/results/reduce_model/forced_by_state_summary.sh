awk -F, 'FNR==1{split(FILENAME,p,"."); spec=p[1]; next} { st = ($NF+0 < 100) ? "near" : "far"; k=$6" "st; t[spec" "k]=t[spec" "k]" "$12; keys[spec" "k]=1 }
function med(s,  n,v,i,j,x){n=split(s,v," "); for(i=2;i<=n;i++){x=v[i];for(j=i-1;j>=1&&v[j]>x;j--)v[j+1]=v[j];v[j+1]=x}; return sprintf("%.2f(%d)", n%2?v[(n+1)/2]:(v[n/2]+v[n/2+1])/2, n)}
END{for(k in keys) print k, med(t[k])}' *.csv | sort -k1,1 -k2n -k3
