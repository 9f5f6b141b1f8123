set terminal pngcairo size 1400,560 noenhanced font ',10'
set output 'mlbench_n2.png'
set multiplot layout 1,2 title 'collie bench: 2 ranks, float32 sum'
set logscale x 2
set format x '%.0b%B'
set xlabel 'size'
set grid
set key top left
set ylabel 'busbw (GB/s)'
set title 'bus bandwidth'
plot 'mlbench_n2.png.dat' index 0 using 1:2 with linespoints title 'collie allreduce', 'mlbench_n2.png.dat' index 1 using 1:2 with linespoints title 'mpi allreduce'
set logscale y 10
set ylabel 'time per operation (us)'
set title 'time'
set key top left
plot 'mlbench_n2.png.dat' index 0 using 1:3 with linespoints title 'collie allreduce', 'mlbench_n2.png.dat' index 1 using 1:3 with linespoints title 'mpi allreduce'
unset multiplot
