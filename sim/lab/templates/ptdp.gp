set terminal pngcairo size 1000,600
set output '{{output}}'
{{block}}
set title 'PTD-P Table 1 on Selene: Tflop/s per GPU, paper vs dtsim (efficiency calibrated on 1.7B)'
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set yrange [0:200]
set xlabel 'model size (billions of parameters)'
set ylabel 'Tflop/s per GPU'
set key top left
set grid ytics
plot $d using 3:xtic(2) title 'PTD-P (paper)' lc rgb '#4477aa', '' using 4 title 'dtsim' lc rgb '#ee6677'
