#include <mpi.h>
#include <stdio.h>
int main(int c,char**v){MPI_Init(&c,&v);float b[2];int r;MPI_Comm_rank(MPI_COMM_WORLD,&r);
for(int k=0;k<5;k++){double t0=MPI_Wtime();for(int i=0;i<2000000;i++)MPI_Allgather(b,0,MPI_FLOAT,b,0,MPI_FLOAT,MPI_COMM_WORLD);
double t=MPI_Wtime()-t0;if(!r)printf("%.1f ns\n",t/2e6*1e9);}MPI_Finalize();}
