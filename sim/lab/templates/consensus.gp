set terminal pngcairo size 1500,900
set output '{{output}}'
set datafile separator ','
set logscale xy
set format y '10^{%L}'
{{key}}
set xlabel 'iteration'
set ylabel 'gap'
set multiplot layout 2,2 title 'Distributed subgradient (Nedic-Ozdaglar), L1 regression, 16 agents, simulated by dtsim'
sel(t, w, r, a, m, col) = (strcol(1) eq t && strcol(2) eq w && strcol(3) eq r && strcol(4) eq a && strcol(9) eq m && column(5) > 0 && column(col) > 0) ? column(col) : 1/0
set title '{{one}}, sync, lazy Metropolis: step rules, F(xbar) - f*'
plot {{#rules}}{{sep}}'{{dir}}/consensus.csv' using 5:(sel('{{one}}', 'lazy-metropolis', '{{rule}}', '{{alpha0}}', 'sync', 8)) with lines lw 2 title '{{rule}} {{alpha0}}'{{/rules}}
set title 'harmonic 0.2/(k+1), sync: F(xbar) - f* (solid), F(yhat) - f* (dashed)'
plot {{#harmonic}}{{sep}}'{{dir}}/consensus.csv' using 5:(sel('{{topology}}', 'lazy-metropolis', 'harmonic', '0.2', 'sync', {{col}})) with lines lw 2 lc {{lc}} dt {{dt}} title '{{topology}}{{suffix}}'{{/harmonic}}
set title 'constant 0.02, sync: lazy Metropolis (solid), Metropolis (dashed)'
plot {{#constant}}{{sep}}'{{dir}}/consensus.csv' using 5:(sel('{{topology}}', '{{weights}}', 'constant', '0.02', 'sync', 8)) with lines lw 2 lc {{lc}} dt {{dt}} title '{{topology}}{{suffix}}'{{/constant}}
set title 'async, lazy Metropolis: harmonic 0.2 (solid), constant 0.02 (dashed)'
plot {{#async}}{{sep}}'{{dir}}/consensus.csv' using 5:(sel('{{topology}}', 'lazy-metropolis', '{{rule}}', '{{alpha0}}', 'async', 8)) with lines lw 2 lc {{lc}} dt {{dt}} title '{{topology}} {{rule}}'{{/async}}
unset multiplot
