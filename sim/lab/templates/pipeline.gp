set terminal pngcairo size 1100,650
set output '{{output}}'
{{blocks}}
set title 'Pipeline bubble on one Selene node: simulated (points) vs (p-1)/(m+p-1), (p-1)/(vm+p-1) (lines)'
set logscale x 2
set xrange [0.8:40]
set yrange [0:1]
set xlabel 'microbatches m'
set ylabel 'bubble fraction (idle share of the step)'
set key outside right
set grid
plot {{#series}}{{sep}}$d{{i}} using 1:2 with points pt {{pt}} ps 1.3 lc rgb '{{color}}' title '{{title}}', $d{{i}} using 1:3 with lines dt {{dt}} lc rgb '{{color}}' notitle{{/series}}
