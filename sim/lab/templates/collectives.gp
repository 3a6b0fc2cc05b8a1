set terminal pngcairo size 1800,640
set output '{{output}}'
set datafile separator ','
set logscale x 2
set logscale y
set format x '2^{%L}'
set format y '10^{%L}'
{{key}}
set xlabel 'bytes per member (n)'
set multiplot layout 1,2 title 'dtsim collectives against the alpha-beta formulas (Thakur, Rabenseifner and Gropp 2005): 64 ranks on a 100 Gb/s, 1 us star (CM02, no cross traffic); points dtsim, dashed lines the formulas'
sel(o, g, col) = (strcol(1) eq o && strcol(2) eq g && $3 == 64 && strcol(10) eq 'cm02') ? column(col) : 1/0
fbus(o, g) = (strcol(1) eq o && strcol(2) eq g && $3 == 64 && strcol(10) eq 'cm02') ? $9 * $5 / $6 : 1/0
set xrange [512:2**31]
set ylabel 'allreduce time (simulated s)'
set title 'allreduce time'
plot '{{dir}}/collectives.csv' using 4:(sel('allreduce', 'ring', 5)) with points pt 7 ps 1.3 lc 1 title 'ring, dtsim', '' using 4:(sel('allreduce', 'ring', 6)) {{formula}} lc 1 title 'ring, formula', '{{dir}}/collectives.csv' using 4:(sel('allreduce', 'halving-doubling', 5)) with points pt 5 ps 1.3 lc 2 title 'halving-doubling, dtsim', '' using 4:(sel('allreduce', 'halving-doubling', 6)) {{formula}} lc 2 title 'halving-doubling, formula', '{{dir}}/collectives.csv' using 4:(sel('allreduce', 'tree', 5)) with points pt 9 ps 1.3 lc 3 title 'tree, dtsim', '' using 4:(sel('allreduce', 'tree', 6)) {{formula}} lc 3 title 'tree, formula'
set ylabel 'busbw (GB/s, 10^9 bytes/s)'
set title "nccl-tests' bus bandwidth; a link is 12.5 GB/s"
plot '{{dir}}/collectives.csv' using 4:(sel('allreduce', 'ring', 9)) with points pt 7 ps 1.3 lc 1 title 'allreduce:ring, dtsim', '' using 4:(fbus('allreduce', 'ring')) {{formula}} lc 1 title 'allreduce:ring, formula', '{{dir}}/collectives.csv' using 4:(sel('allreduce', 'halving-doubling', 9)) with points pt 5 ps 1.3 lc 2 title 'allreduce:halving-doubling, dtsim', '' using 4:(fbus('allreduce', 'halving-doubling')) {{formula}} lc 2 title 'allreduce:halving-doubling, formula', '{{dir}}/collectives.csv' using 4:(sel('allreduce', 'tree', 9)) with points pt 9 ps 1.3 lc 3 title 'allreduce:tree, dtsim', '' using 4:(fbus('allreduce', 'tree')) {{formula}} lc 3 title 'allreduce:tree, formula', '{{dir}}/collectives.csv' using 4:(sel('reduce-scatter', 'ring', 9)) with points pt 4 ps 1.3 lc 4 title 'reduce-scatter:ring, dtsim', '' using 4:(fbus('reduce-scatter', 'ring')) {{formula}} lc 4 title 'reduce-scatter:ring, formula', '{{dir}}/collectives.csv' using 4:(sel('allgather', 'ring', 9)) with points pt 8 ps 1.3 lc 5 title 'allgather:ring, dtsim', '' using 4:(fbus('allgather', 'ring')) {{formula}} lc 5 title 'allgather:ring, formula', '{{dir}}/collectives.csv' using 4:(sel('broadcast', 'tree', 9)) with points pt 12 ps 1.3 lc 6 title 'broadcast:tree, dtsim', '' using 4:(fbus('broadcast', 'tree')) {{formula}} lc 6 title 'broadcast:tree, formula', '{{dir}}/collectives.csv' using 4:(sel('reduce', 'tree', 9)) with points pt 14 ps 1.3 lc 7 title 'reduce:tree, dtsim', '' using 4:(fbus('reduce', 'tree')) {{formula}} lc 7 title 'reduce:tree, formula'
unset multiplot
