set terminal pngcairo size 1100,440 noenhanced font ',10'
set output 'docs/results/sim/bluefog.png'
set multiplot layout 1,2 title 'collie sim train (predicted)'
set grid
set logscale x 2
set xlabel 'ranks'
set key top left
set ylabel 'samples/s'
set title 'throughput'
plot 'docs/results/sim/bluefog.png.dat' index 0 using 1:2 with linespoints title 'allreduce:ring', 'docs/results/sim/bluefog.png.dat' index 1 using 1:2 with linespoints title 'allreduce:hierarchical', 'docs/results/sim/bluefog.png.dat' index 2 using 1:2 with linespoints title 'neighbor', 'docs/results/sim/bluefog.png.dat' index 3 using 1:2 with linespoints title 'hierarchical-neighbor'
set key bottom left
set ylabel 'scaling efficiency'
set yrange [0:1.05]
set title 'throughput / (ranks x one rank)'
plot 'docs/results/sim/bluefog.png.dat' index 0 using 1:3 with linespoints title 'allreduce:ring', 'docs/results/sim/bluefog.png.dat' index 1 using 1:3 with linespoints title 'allreduce:hierarchical', 'docs/results/sim/bluefog.png.dat' index 2 using 1:3 with linespoints title 'neighbor', 'docs/results/sim/bluefog.png.dat' index 3 using 1:3 with linespoints title 'hierarchical-neighbor'
unset multiplot
