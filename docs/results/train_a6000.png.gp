set terminal pngcairo size 1500,480 noenhanced font ',10'
set output '/tmp/a6k/train_a6000.png'
set multiplot layout 1,3 title 'collie train'
set grid
set key bottom right
set xlabel 'wall time (s)'
set ylabel 'test accuracy'
set title 'accuracy'
plot '/tmp/a6k/train_a6000.png.dat' index 0 using 1:3 with linespoints title '1 ranks', '/tmp/a6k/train_a6000.png.dat' index 1 using 1:3 with linespoints title '2 ranks', '/tmp/a6k/train_a6000.png.dat' index 2 using 1:3 with linespoints title '4 ranks'
set key top right
set ylabel 'training loss'
set title 'loss'
plot '/tmp/a6k/train_a6000.png.dat' index 0 using 1:2 with linespoints title '1 ranks', '/tmp/a6k/train_a6000.png.dat' index 1 using 1:2 with linespoints title '2 ranks', '/tmp/a6k/train_a6000.png.dat' index 2 using 1:2 with linespoints title '4 ranks'
set key top left
set xlabel 'ranks'
set ylabel 'speedup'
set title 'throughput scaling'
plot '/tmp/a6k/train_a6000.png.dat' index 3 using 1:2 with linespoints title 'measured', x with lines title 'ideal'
unset multiplot
