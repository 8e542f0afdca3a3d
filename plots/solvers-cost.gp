# solvers-cost.gp: cost against accuracy of the ways of issue 17: the time per step (bin/vla-scaling,
# one core, vla3, d = 16) against the error of the vector the model uses at t = 10^5 (x_err, the
# mean over the heads; lmlike, nudge off, reference lib in f64), per way (shape) and precision
# (colour); cg and cheb at several K. Left without forgetting, right with gamma = 0.999. A point
# at the top edge is a run that turned NaN or diverged (x_err >= 1).
# Usage: gnuplot -e "dir='data'; out='figures/solvers-cost'" plots/solvers-cost.gp
# Reads DIR/solvers-cost.dat (columns: prec way gamma ns_d16 ns_d32 x_err; prec and way 1-based
# indices into the lists below).
if (!exists("dir")) dir = 'data'
if (!exists("out")) out = 'figures/solvers-cost'
precs = 'f32 f16 bf16 f16-f32 bf16-f32'
names = 'sm sr solve cg:1 cg:2 cg:4 cg:8 cg:16 cheb:4 cheb:8 cheb:16 cheb:32'
cost = dir.'/solvers-cost.dat'
set encoding utf8
set logscale xy
set format x '10^{%T}'
set format y '10^{%T}'
set grid xtics ytics lc rgb '#dddddd'
# x_err at or above 1 (or NaN: the run failed) drawn at the top edge
top = 3
clip(e) = (e == e && e < 1) ? e : top
do for [k = 1:2] {
    if (k == 1) {
        set terminal pngcairo size 1650, 700 font 'Sans,11' enhanced
        set output out.'.png'
        psc = 1
    } else {
        set terminal pdfcairo size 11in, 4.7in font 'Sans,8' enhanced
        set output out.'.pdf'
        psc = 0.6
    }
    array pcol[5] = [0x000000, 0x1f77b4, 0xd62728, 0x2ca02c, 0xff7f0e]
    array wpt[12] = [6, 12, 5, 1, 2, 3, 8, 9, 10, 11, 14, 15]
    set multiplot layout 1, 2 title "Cost against accuracy: x\\_err of vla3 at t = 10^5 (lmlike, d = 16) against time per step (one core); top edge: failed" font ',13'
    set xlabel 'ns per step (vla3, d = 16, one core, CPU time)'
    set ylabel 'x\_err at t = 10^5'
    set yrange [1e-9 : 10]
    set key outside right top Left reverse box opaque maxrows 18
    do for [gi = 1:2] {
        G = gi == 1 ? 1 : 0.999
        set title gi == 1 ? 'no forgetting' : '{/Symbol g} = 0.999'
        plot for [i = 1:12] cost using (($2 == i && abs($3 - G) < 1e-9) ? $4 : 1/0):(clip($6)):(pcol[int($1)]) \
                 with points pt wpt[i] ps 1.6*psc lw 2*psc lc rgb variable title word(names, i), \
             for [p = 1:5] NaN with points pt 5 ps 1.5*psc lc rgb sprintf('#%06x', pcol[p]) title word(precs, p)
    }
    unset multiplot
}
