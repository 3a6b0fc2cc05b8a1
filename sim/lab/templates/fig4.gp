{{blocks}}set terminal pngcairo size 860,560
set output '{{output}}'
set key bottom right
set xlabel 'simulated time (hours)'
set ylabel 'held-out accuracy of the proxy'
set title 'Dean et al. 2012 Fig. 4, simulated by dtsim (target {{target}})'
set arrow from graph 0, first {{target_line}} to graph 1, first {{target_line}} nohead dt 2
plot {{#curves}}{{sep}}$c{{k}} using 1:2 with lines lw 2 title '{{label}}'{{/curves}}
