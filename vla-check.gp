# vla-check's figure: the read-out's error against t, one panel per model
set terminal pngcairo size 560,360 font 'DejaVu Sans,10'
set output 'vla-check.png'
set logscale xy
set format y '10^{%L}'
set xlabel 't'
set ylabel '||o - o_{ref}|| / ||o_{ref}||'
set key outside right top font ',7'
set yrange [1e-17:10]
set xrange [1:100]
set multiplot layout 1,1 title 'trace:/tmp/lt/tr: 2 heads x 100 steps (worst head)' noenhanced
set title 'gdn'
plot 'vla-check-errors.dat' index 0 using 1:($4 > 0 ? $4 : 1e-17) with lines lw 2 lc 1 dt 1 title 'f64 sm chunk:64', 'vla-check-errors.dat' index 1 using 1:($4 > 0 ? $4 : 1e-17) with lines lw 2 lc 2 dt 1 title 'f32 sm chunk:64', 'vla-check-errors.dat' index 2 using 1:($4 > 0 ? $4 : 1e-17) with lines lw 2 lc 3 dt 1 title 'f16 sm chunk:64', 'vla-check-errors.dat' index 3 using 1:($4 > 0 ? $4 : 1e-17) with lines lw 2 lc 4 dt 1 title 'bf16 sm chunk:64', 'vla-check-errors.dat' index 4 using 1:($4 > 0 ? $4 : 1e-17) with lines lw 2 lc 5 dt 1 title 'f16-f32 sm chunk:64', 'vla-check-errors.dat' index 5 using 1:($4 > 0 ? $4 : 1e-17) with lines lw 2 lc 6 dt 1 title 'bf16-f32 sm chunk:64', 'vla-check-errors.dat' index 6 using 1:($4 > 0 ? $4 : 1e-17) with lines lw 2 lc 7 dt 1 title 'f16-kern sm chunk:64', 'vla-check-errors.dat' index 7 using 1:($4 > 0 ? $4 : 1e-17) with lines lw 2 lc 8 dt 1 title 'bf16-kern sm chunk:64', 1 with lines dt 2 lc 'gray' notitle
unset multiplot
