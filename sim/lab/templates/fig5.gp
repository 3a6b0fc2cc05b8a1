{{blocks}}set terminal pngcairo size 1100,480
set output '{{output}}'
set multiplot layout 1,2 title 'Dean et al. 2012 Fig. 5, simulated by dtsim: time to the target accuracy'
set logscale x
set key top right
set ylabel 'hours to the target'
{{^any}}set yrange [0:1]
set label 'no run reached the target within the horizon' at graph 0.5, 0.5 center
{{/any}}{{#any}}set yrange [0:*]
{{/any}}{{#axes}}set xrange [{{lo}}:{{hi}}]
set xlabel '{{label}}'
plot {{#series}}{{sep}}$m{{m}} using {{axis}}:3 with linespoints lw 2 pt 7 title '{{method}}'{{/series}}{{^series}}NaN notitle{{/series}}
{{/axes}}unset multiplot
