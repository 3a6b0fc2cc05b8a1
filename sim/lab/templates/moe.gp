set terminal pngcairo size 1500,620
set output '{{output}}'
{{blocks}}
set multiplot layout 1,2 title 'MoE GPT on 8 selene GPUs: top-1 and top-2, capacity 1.0-2.0, auxiliary loss off and on'
set grid
set key off
set title 'held-out loss against training time (dashed: aux loss off)'
set xlabel 'simulated time (ms)'
set ylabel 'held-out loss (nats per token)'
set lmargin at screen 0.06
set rmargin at screen 0.40
plot {{#runs}}{{sep}}$l{{k}} using 1:2 with lines lw 2 dt {{dt}} lc rgb '{{colour}}'{{/runs}}
set title 'step time against the kept imbalance (open: aux loss off)'
set xlabel 'kept imbalance at the end (max/mean rows an expert computed)'
set ylabel 'step time (simulated us)'
set lmargin at screen 0.47
set rmargin at screen 0.80
{{key}}
plot {{#runs}}{{sep}}$s{{k}} using 1:2 with points ps 2 pt {{pt}} lc rgb '{{colour}}' title 'top-{{top_k}} cap {{cap}} aux {{aux}}'{{/runs}}
unset multiplot
