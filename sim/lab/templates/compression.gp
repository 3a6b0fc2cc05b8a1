set terminal pngcairo size {{width}},500
set output '{{output}}'
{{blocks}}
set multiplot layout 1,{{panels}} title 'Held-out accuracy against simulated time, 8 replicas, {{steps}} steps each (dashed grey: the target)'
set logscale x
set yrange [0:1]
set xlabel 'simulated time (s)'
set ylabel 'held-out accuracy'
set grid
{{#panel}}set title '{{name}} ({{network}})'
{{#last}}{{key}}{{/last}}{{^last}}unset key{{/last}}
plot {{target}} with lines dt 3 lw 1.5 lc rgb 'grey' notitle{{#lines}}, $r{{k}} using 1:2 with lines {{style}} title '{{method}} {{setting}}'{{/lines}}
{{/panel}}unset multiplot
