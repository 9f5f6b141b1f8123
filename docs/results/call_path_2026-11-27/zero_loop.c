/* zero_loop.c - ns per collie_allgather of argv[1] elements (default 0), 5 runs of 2 million.
 *   gcc -O2 -Iinclude zero_loop.c -Lbuild -lcollie -Wl,-rpath,$PWD/build -o zero_loop
 *   build/collie run -n 1 ./zero_loop [COUNT] */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <time.h>
#include "collie.h"
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
#include <stdlib.h>
int main(int argc,char**argv){size_t n=argc>1?strtoul(argv[1],0,10):0;collie_comm*c;if(collie_init(&c))return 1;float b[2];
for(int r=0;r<5;r++){double t0=now();for(int i=0;i<2000000;i++)collie_allgather(c,b,b,n,COLLIE_FLOAT32);
double t=now()-t0; if(collie_rank(c)==0)printf("%.1f ns\n",t/2e6*1e9);}
collie_finalize(c);return 0;}
