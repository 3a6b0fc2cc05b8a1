set terminal pngcairo size 1500,600
set termoption noenhanced
set output '{{output}}'
{{blocks}}
{{key}}
set grid ytics
set style fill solid 0.7 border -1
set boxwidth 0.6
set xtics rotate by -20
set multiplot layout 1,{{#robust_panel}}2{{/robust_panel}}{{^robust_panel}}1{{/robust_panel}} title 'Energy of training from the simulated step: dtsim (bars) against the papers (circles: Patterson et al. 2021 Table 4, Llama 2 Table 2)'
set title 'facility energy of the whole training run'
set logscale y
set ylabel 'MWh'
set xrange [-0.6:4.6]
plot $runs using 0:2:xtic(1) with boxes lc rgb '#4477aa' title 'dtsim', '' using 0:3 {{paper}} title 'paper'
{{#robust_panel}}
unset logscale y
set title 'one assumption switched: change of the energy'
set ylabel 'per cent of the committed run'
set xrange [-0.6:6.6]
set boxwidth 0.35
plot $robust using ($0-0.18):2:xtic(1) with boxes lc rgb '#ee6677' title 'GPT-3 175B', '' using ($0+0.18):3 with boxes lc rgb '#228833' title 'Llama 2 70B'
{{/robust_panel}}
unset multiplot
