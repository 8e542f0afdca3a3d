# stagnation.gp: where round-to-nearest 16-bit sm stops moving A (issue 7): the fraction of A's
# entries that a step still changes (bin/vla-drift's a_moved) against t, vla3 with the nudge off,
# for d = 8..64 on two streams, in binary16 and bfloat16. The prediction from the unit roundoff:
# with isotropic u', A_t ~ (lambda0 + t/d^2)^-1 I and a diagonal update ~ A_t^2/d^2, which falls
# below half an ulp of A_t (u A_t) once t ~ 1/u: 2048 in binary16, 256 in bfloat16, whatever d.
# Usage: gnuplot -e "dir='data'; out='figures/stagnation'" plots/stagnation.gp
if (!exists("dir")) dir = 'data'
if (!exists("out")) out = 'figures/stagnation'
ds = '8 16 32 64'
f(p, s, d) = sprintf('%s/stagnation-%s-%s-d%s.dat', dir, p, s, d)
set encoding utf8
set logscale x
set format x '10^{%T}'
set grid xtics ytics lc rgb '#dddddd'
set xlabel 't (tokens)'
set ylabel "fraction of A's entries a step changes"
set yrange [0 : 1.05]
set xrange [1 : 1e5]
do for [k = 1:2] {
    if (k == 1) {
        set terminal pngcairo size 1400, 900 font 'Sans,11' enhanced
        set output out.'.png'
        psc = 1
    } else {
        set terminal pdfcairo size 9.5in, 6.1in font 'Sans,8' enhanced
        set output out.'.pdf'
        psc = 0.6
    }
    array col[4] = ['#1f77b4', '#2ca02c', '#ff7f0e', '#d62728']
    do for [i = 1:4] {
        set style line i lc rgb col[i] lw 2*psc pt (5 + 2*i) ps 0.6*psc
    }
    set style line 10 lc rgb '#555555' dt 2 lw 1.5*psc
    set multiplot layout 2, 2 title "Stagnation of round-to-nearest sm: vla3, nudge off; dashed: t = 1/u, where a diagonal update falls below half an ulp" font ',13'
    set key bottom left box opaque
    do for [p = 1:2] {
        P = word('f16 bf16', p)
        u = (p == 1) ? 2.0**-11 : 2.0**-8
        do for [s = 1:2] {
            S = word('lmlike gauss', s)
            set title sprintf('%s, %s stream', P, S)
            set arrow 1 from 1/u, graph 0 to 1/u, graph 1 nohead ls 10
            plot for [i = 1:4] f(P, S, word(ds, i)) using 1:13 with linespoints ls i title sprintf('d = %s', word(ds, i)), \
                 NaN with lines ls 10 title sprintf('t = 1/u = %g', 1/u)
        }
    }
    unset multiplot
}
