set terminal pngcairo size 800,560
set output '{{output}}'
set datafile separator ','
set key top left Left reverse
set logscale x 2
set xlabel 'machines per model replica'
set ylabel 'training speed-up'
# a tenth of the height above the highest point or marker (the paper's 12x at 81 machines is
# the highest with --quick): nothing sits on the top border
set offsets 0, 0, graph 0.1, 0
set title 'Dean et al. 2012 Fig. 3, simulated by dtsim'
$paper << EOD
8,2.2
81,12
EOD
plot for [m in '{{models}}'] '{{dir}}/fig3.csv' using 2:(strcol(1) eq m ? $4 : 1/0) with linespoints title m, $paper using 1:2 with points pt 9 ps 2 lc rgb 'black' title 'paper: speech 2.2x at 8, image-1.7b > 12x at 81'
