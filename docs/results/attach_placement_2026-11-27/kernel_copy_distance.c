/*
 * kernel_copy_distance.c - process_vm_readv of 256 KiB within this process, and
 * glibc's memcpy of the same, with the destination D bytes past a page-aligned
 * source.  Prints D:kernel GB/s/memcpy GB/s (best of 20).  On this machine's AMD
 * EPYC both crawl at D = 1-31 modulo 4 KiB: kernel_copy.txt, first line.
 *     gcc -O2 kernel_copy_distance.c -o d && ./d
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(void){
  size_t n = 262144;
  unsigned char *src = aligned_alloc(4096, n+65536), *dst = aligned_alloc(4096, n+65536);
  memset(src,1,n+65536); memset(dst,2,n+65536);
  int ds[]={1,2,4,7,8,12,16,20,24,28,30,31,32,33,36,40,63,4096+8,8192+16,12288+31,4096+32};
  for(unsigned i=0;i<sizeof ds/sizeof *ds;i++){ int d=ds[i];
    struct iovec l={dst+d,n}, r={src+ (d>4096? 4096*0:0),n};
    double best=1e9;
    for(int k=0;k<20;k++){double t=now(); process_vm_readv(getpid(),&l,1,&r,1,0); t=now()-t; if(t<best)best=t;}
    double bu=1e9;
    for(int k=0;k<20;k++){double t=now(); memcpy(dst+d,src,n); __asm__ volatile("":::"memory"); t=now()-t; if(t<bu)bu=t;}
    printf("%d:%.1f/%.1f ", d, n/best/1e9, n/bu/1e9);
  }
  printf("\n");
}
