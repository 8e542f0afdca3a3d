# forms-ut.gp: the growth of the chunked delta rule's UT transform T = (I + L)^-1 with the chunk
# size C (docs/forms.md): its largest entry and its condition number, for raw keys
# N(0,1) in d = 64 with rates sigmoid(N(0,1)) (fla issue 736's inputs), the same keys normalized,
# and L_ij ~ N(0,1) (fla issue 537's solve_tril input), beside the largest numbers of binary16 and
# binary32, which the kernels' T, W and U must fit. d and the numbers of draws and seeds come from
# the table: the points are the median over the seeds of each seed's median (their least and
# greatest, within a factor of 10 of it, are in the table's *_lo, *_hi columns and would not show
# on these axes), dashed the maximum over all draws.
# Usage: gnuplot -e "dir='data'; out='figures/forms-ut'" plots/forms-ut.gp (OUT.png/pdf, OUT-1col.png/pdf)
# Reads DIR/forms-ut.dat (bin/vla-forms --what ut: C kind max_med max_max cond_med cond_max
# f16_over f32_over max_f32_med max_med_lo max_med_hi cond_med_lo cond_med_hi, a block per kind).
if (!exists("dir")) dir = 'data'
if (!exists("out")) out = 'figures/forms-ut'
f = dir.'/forms-ut.dat'
load system("dirname '" . ARG0 . "'") . '/tables.gp'
d = config(f, 'd')
draws = system(sprintf("sed -n 's/^# samples: \\([0-9]*\\) .*/\\1/p' '%s' | head -1", f))
seeds = system(sprintf("sed -n 's/^# seeds: \\([0-9]*\\) .*/\\1/p' '%s' | head -1", f))
if (seeds eq '') seeds = '1'
set encoding utf8
set logscale xy
set format y '10^{%T}'
set grid xtics ytics lc rgb '#dddddd'
set xtics (2, 4, 8, 16, 32, 64, 128, 256)
set xlabel 'C (chunk size)'
# a double-column (7 in) and a single-column (3.4 in, OUT-1col) figure, each as PNG and PDF
do for [k = 1:4] {
    one = k > 2 ? '-1col' : ''
    if (k % 2 == 1) {
        set terminal pngcairo size (k > 2 ? 700 : 1500), (k > 2 ? 1400 : 560) font 'Sans,11' enhanced
        set output out.one.'.png'
        psc = 1
    } else {
        set terminal pdfcairo size (k > 2 ? 3.4 : 7)*1in, (k > 2 ? 6.0 : 2.59)*1in font 'Sans,' . (k > 2 ? 6 : 8) enhanced
        set output out.one.'.pdf'
        psc = 0.6
    }
    array col[3] = ['#d62728', '#2ca02c', '#1f77b4']
    array nm[3] = ['raw keys N(0,1), {/Symbol b} = sigmoid (fla 736)', 'the keys normalized', 'L_{ij} from N(0,1) (fla 537)']
    do for [i = 1:3] {
        set style line i lc rgb col[i] lw 2*psc pt 7 ps 0.8*psc
        set style line 10 + i lc rgb col[i] lw 1.5*psc dt 2
    }
    set multiplot layout (k > 2 ? 3 : 1), (k > 2 ? 1 : 3) title (k > 2 ? '' : sprintf("The UT transform T = (I + strictly\\_lower(diag(beta) K K^T))^{-1} of a chunk (d = %s; the median over %s seeds of each one's median over %s draws; dashed: the maximum)", d, seeds, draws)) font ',12'
    set title 'largest entry max |T_{ij}|'
    set ylabel 'max |T_{ij}|'
    set key top left Left reverse box opaque font ',9'
    set offsets 0, 0, graph 0.45, 0  # room above the curves for the key
    plot for [i = 0:2] f index i using 1:3 with linespoints ls i + 1 title nm[i + 1], \
         for [i = 0:2] f index i using 1:4 with lines ls 11 + i notitle, \
         65504 with lines lc rgb '#888888' dt 3 title 'binary16 max', \
         3.4028e38 with lines lc rgb '#444444' dt 4 title 'binary32 max'
    unset key
    set offsets 0, 0, 0, 0
    set title 'condition number ||T|| ||I + L||'
    set ylabel 'cond_2(T)'
    plot for [i = 0:2] f index i using 1:5 with linespoints ls i + 1 notitle, \
         for [i = 0:2] f index i using 1:6 with lines ls 11 + i notitle
    set title 'T beyond binary16 (solid), binary32 (dashed)'
    set ylabel 'fraction of the draws'
    unset logscale y
    set format y '%g'
    set yrange [-0.02 : 1.05]
    plot for [i = 0:2] f index i using 1:7 with linespoints ls i + 1 notitle, \
         for [i = 0:2] f index i using 1:8 with lines ls 11 + i notitle
    set logscale y
    set format y '10^{%T}'
    set yrange [*:*]
    unset multiplot
}
