/*
 * kernel_copy_bounce.c - process_vm_readv of N bytes (argv[1]) within this
 * process: into a buffer at the source's page offset ("aligned"), 16 bytes
 * past it ("crawl"), and through a page-aligned bounce buffer of 16 KiB-1 MiB
 * copied on by an AVX2 loop (what transport/shm_attach.c does).  Best of 30.
 *     gcc -O2 -mavx2 kernel_copy_bounce.c -o b && ./b 2097152
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <immintrin.h>
static void vcp(unsigned char*d,const unsigned char*s,size_t n){size_t i=0;for(;i+128<=n;i+=128){__m256i a=_mm256_loadu_si256((const void*)(s+i)),b=_mm256_loadu_si256((const void*)(s+i+32)),c=_mm256_loadu_si256((const void*)(s+i+64)),e=_mm256_loadu_si256((const void*)(s+i+96));_mm256_storeu_si256((void*)(d+i),a);_mm256_storeu_si256((void*)(d+i+32),b);_mm256_storeu_si256((void*)(d+i+64),c);_mm256_storeu_si256((void*)(d+i+96),e);} memcpy(d+i,s+i,n-i);}
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static void rd(void*d, const void*s, size_t n){struct iovec l={d,n}, r={(void*)s,n}; process_vm_readv(getpid(),&l,1,&r,1,0);}
int main(int argc,char**argv){
  size_t n = strtoul(argv[1],0,0);
  unsigned char *src = aligned_alloc(4096, n+8192), *dst = aligned_alloc(4096, n+8192), *b = aligned_alloc(4096, (1<<20)+4096);
  memset(src,1,n+8192); memset(dst,2,n+8192); memset(b,3,(1<<20)+4096);
  double best;
  #define T(label, stmt) best=1e9; for(int k=0;k<30;k++){double t=now(); stmt; t=now()-t; if(t<best)best=t;} printf("%s %.2f GB/s\n", label, n/best/1e9);
  T("aligned ", rd(dst, src, n));
  T("crawl   ", rd(dst+16, src, n));
  size_t chunks[]={16384,65536,262144,1048576};
  for(int c=0;c<4;c++){ size_t ch=chunks[c]; char lab[32]; snprintf(lab,32,"bounce%-7zu",ch);
    T(lab, for(size_t o=0;o<n;o+=ch){size_t m=n-o<ch?n-o:ch; rd(b, src+o, m); vcp(dst+16+o, b, m);} );
  }
}
