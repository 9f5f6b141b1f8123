/* time per call of one collective at given sizes, buffers at chosen page offsets:
   SEND_OFF, RECV_OFF (+ 8*rank when SKEW_RANK=1). usage: skew_loop allreduce|allgather BYTES... */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "collie.h"
static double seconds(void){struct timespec ts;clock_gettime(CLOCK_MONOTONIC,&ts);return ts.tv_sec+ts.tv_nsec*1e-9;}
static int cmpd(const void*a,const void*b){double x=*(const double*)a,y=*(const double*)b;return (x>y)-(x<y);}
int main(int argc,char**argv){
  collie_comm *comm; if(collie_init(&comm)) return 1;
  int rank=collie_rank(comm), n=collie_size(comm);
  int so = getenv("SEND_OFF")?atoi(getenv("SEND_OFF")):16, ro=getenv("RECV_OFF")?atoi(getenv("RECV_OFF")):16;
  if(getenv("SKEW_RANK")) ro += 8*rank;
  int ag = !strcmp(argv[1],"allgather");
  for(int s=2;s<argc;s++){
    size_t bytes=strtoull(argv[s],0,10), count=bytes/4;
    unsigned char *sb=aligned_alloc(4096,bytes*n+8192), *rb=aligned_alloc(4096,bytes*n+8192);
    memset(sb,0,bytes*n+8192); memset(rb,0,bytes*n+8192);
    float *snd=(float*)(sb+so), *rcv=(float*)(rb+ro);
    int iters=(int)((32u<<20)/bytes); iters=iters<5?5:iters>2000?2000:iters;
    double t[11];
    for(int b=-1;b<11;b++){ collie_barrier(comm); double t0=seconds();
      for(int i=0;i<iters;i++){ collie_status st = ag? collie_allgather(comm,snd,rcv,count,COLLIE_FLOAT32): collie_allreduce(comm,snd,rcv,count,COLLIE_FLOAT32,COLLIE_SUM); if(st){fprintf(stderr,"%s\n",collie_last_error(comm));return 1;} }
      double mine=(seconds()-t0)/iters; if(b>=0) collie_allreduce(comm,&mine,&t[b],1,COLLIE_FLOAT64,COLLIE_MAX);}
    qsort(t,11,sizeof *t,cmpd);
    if(!rank) printf("%zu:%.1f ", bytes, t[5]*1e6);
    free(sb); free(rb);
  }
  if(!rank) printf("\n");
  collie_finalize(comm); return 0;
}
