set terminal pngcairo size 800,700
set output '{{output}}'
{{blocks}}
set title 'DeepBench V100 fp16 GEMMs: kernel model vs measured'
set logscale xy
set xrange [0.5:150]
set yrange [0.5:150]
set xlabel 'measured Tflop/s'
set ylabel 'model Tflop/s'
set key top left
set grid
plot x title 'equal' lc rgb '#999999', $nn using 1:2 with points pt 7 lc rgb '#4477aa' title 'A, B as stored (NN)', $tr using 1:2 with points pt 6 lc rgb '#ee6677' title 'A or B transposed'
