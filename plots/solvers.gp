# solvers.gp: keep M and solve, against tracking A (issue 17): the relative error of the vector vla3
# uses, alpha = unit(A_t k'), against t, one panel per precision, one line per way: sm (and sr) track
# A; solve, cg:8 and cheb:8 keep M = A^-1 and solve M y = k' at every step. Top row without
# forgetting, bottom row with gamma = 0.999. vla3 on lmlike, d = 16, nudge off; reference lib in
# binary64 (f64: the exact MPFR reference, to 10^4). Head 0 of each table; a line ends where its
# run turned NaN.
# Usage: gnuplot -e "dir='data'; out='figures/solvers'" plots/solvers.gp   (writes OUT.png and OUT.pdf)
# Reads DIR/solvers_lmlike_gGAMMA_PREC_WAY.dat (bin/vla-drift; column 14 is x_err).
if (!exists("dir")) dir = 'data'
if (!exists("out")) out = 'figures/solvers'
precs = 'f64 f32 f16 bf16 f16-f32 bf16-f32'
gammas = '1 0.999'
ways = 'sm sr solve cg8 cheb8'         # file-name tokens
names = 'sm sr solve cg:8 cheb:8'
f(g, p, w) = sprintf('%s/solvers_lmlike_g%s_%s_%s.dat', dir, g, p, w)
exists_file(n) = system(sprintf("test -s '%s' && echo 1 || echo 0", n)) + 0
set encoding utf8
set logscale xy
set format x '10^{%T}'
set format y '10^{%T}'
set grid xtics ytics lc rgb '#dddddd'
do for [k = 1:2] {
    if (k == 1) {
        set terminal pngcairo size 2100, 900 font 'Sans,11' enhanced
        set output out.'.png'
        psc = 1
    } else {
        set terminal pdfcairo size 14in, 6in font 'Sans,8' enhanced
        set output out.'.pdf'
        psc = 0.6
    }
    array col[5] = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd']
    do for [i = 1:5] {
        set style line i lc rgb col[i] lw 2*psc pt (4 + 2*i) ps 0.6*psc
    }
    set multiplot layout 2, 6 title "Keep M and solve: the error ||{/Symbol a}_t - {/Symbol a}_t^{ref}|| / ||{/Symbol a}_t^{ref}|| of the vector vla3 uses (lmlike, d = 16, nudge off; reference: lib in f64, f64 against MPFR)" font ',13'
    set xlabel 't (tokens)'
    set ylabel 'x\_err'
    set yrange [1e-17 : 1e2]
    set xrange [1 : 1e6]
    set key bottom right Right noreverse samplen 2 box opaque
    do for [gi = 1:2] {
        G = word(gammas, gi)
        do for [p = 1:6] {
            P = word(precs, p)
            set title sprintf('%s, %s', P, G eq '1' ? 'no forgetting' : '{/Symbol g} = '.G)
            plot for [i = 1:5] (exists_file(f(G, P, word(ways, i))) ? f(G, P, word(ways, i)) : '/dev/null') \
                 index 0 using 1:14 with linespoints ls i title word(names, i)
        }
    }
    unset multiplot
}
