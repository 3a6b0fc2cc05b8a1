set terminal pngcairo size 1100,600
set output '{{output}}'
{{blocks}}
set title 'PTD-P Table 2 on Selene: Tflop/s per GPU at a fixed batch (lines: dtsim; circles: the paper)'
set logscale x 2
set xrange [300:3000]
set yrange [0:220]
set xlabel 'GPUs'
set ylabel 'Tflop/s per GPU'
set grid
{{key}}
plot {{#series}}{{sep}}$d{{i}} using 1:2 with linespoints lw 2 {{style}}, $d{{i}} using 1:3 {{paper}} {{title}}{{/series}}
