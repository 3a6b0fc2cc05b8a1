set terminal pngcairo size 1100,600
set output '{{output}}'
{{block}}
set title 'Megatron-LM weak scaling on DGX-2H: efficiency per GPU vs the 1-GPU 39 Tflop/s'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set yrange [0:110]
set ylabel 'efficiency (% of the 1-GPU rate per GPU)'
set bmargin 7
set xlabel 'GPUs (model, MP x DP)' offset 0,-1.5
set key top right
set grid ytics
plot $data using 2:xtic(1) title 'Megatron-LM (paper)' lc rgb '#4477aa', '' using 3 title 'dtsim' lc rgb '#ee6677'
