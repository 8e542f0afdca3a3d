# cp.gp: the context-parallel form's error against the rank count R (docs/forms.md "cp:R, the
# context-parallel form"): gdn and mamba2, the relative error of the fold of all R summaries (the
# state after T: squares) and of every read-out (circles) against the one pass of the reference,
# the summaries' A from two runs (solid) or directly (dashed), each precision a colour.
# Usage: gnuplot -e "dir='data'; out='figures/cp'" plots/cp.gp (OUT.png/pdf, OUT-1col.png/pdf)
# Reads DIR/PRE-gdn.dat and DIR/PRE-mamba2.dat, PRE cp (or cplong: plots/cplong.gp), from
# bin/vla-forms --what cp (R C prec summary s_in s_fold s_end o o_last). The titles (T, the
# model's stream and d, the precisions) come from the tables.
if (!exists("dir")) dir = 'data'
if (!exists("pre")) pre = 'cp'
if (!exists("out")) out = 'figures/'.pre
if (!exists("keypos")) keypos = 'center right' # where no curve of the T = 131072 tables runs
load system("dirname '" . ARG0 . "'") . '/tables.gp'
models = 'gdn mamba2'
# the rows of one precision and construction (one curve; a filter, not 1/0, so the line is unbroken)
sel(f, p, s) = sprintf("< awk '!/^#/ && NF && $3 == \"%s\" && $4 == \"%s\"' '%s'", p, s, f)
precs(f) = system(sprintf("awk '!/^#/ && NF && !s[$3]++ { printf \"%%s \", $3 }' '%s'", f))
set encoding utf8
set logscale xy 2
set logscale y 10
set format y '10^{%T}'
set xtics (1, 2, 4, 8, 16, 32, 64)
set xrange [0.8:80]
set grid xtics ytics lc rgb '#dddddd'
do for [k = 1:4] {
    one = k > 2 ? '-1col' : ''
    if (k % 2 == 1) {
        set terminal pngcairo size (k > 2 ? 700 : 1400), (k > 2 ? 1000 : 560) font 'Sans,11' enhanced
        set output out.one.'.png'
        psc = 1
    } else {
        set terminal pdfcairo size (k > 2 ? 3.4 : 7)*1in, (k > 2 ? 4.9 : 2.8)*1in font 'Sans,' . (k > 2 ? 6 : 8) enhanced
        set output out.one.'.pdf'
        psc = 0.6
    }
    array col[3] = ['#1f77b4', '#d62728', '#2ca02c']
    f1 = dir.'/'.pre.'-gdn.dat'
    set multiplot layout (k > 2 ? 2 : 1), (k > 2 ? 1 : 2) title (k > 2 ? '' : sprintf("context parallelism, chunk:64, T = %s: the fold's state (squares) and the read-outs (circles), A from two runs (solid) or directly (dashed)", word(header(f1, 'cp'), 3))) font ',11'
    set xlabel 'ranks R'
    set ylabel 'relative error'
    eval('set key '.keypos." Left reverse box opaque font ',9'")
    do for [m = 1:2] {
        f = dir.'/'.pre.'-'.word(models, m).'.dat'
        ps = precs(f)
        set title sprintf('%s on %s, d = %s%s', config(f, 'model'), stream_name(f), config(f, 'd'), m == 2 ? ', log-gates pinned at -1e-4' : '')
        plot for [p = 1:words(ps)] sel(f, word(ps, p), 'two') using 1:8 with linespoints lc rgb col[p] lw 2*psc pt 7 ps 0.6*psc title word(ps, p).' two', \
             for [p = 1:words(ps)] sel(f, word(ps, p), 'direct') using 1:8 with linespoints lc rgb col[p] lw 2*psc dt 2 pt 6 ps 0.9*psc title word(ps, p).' direct', \
             for [p = 1:words(ps)] sel(f, word(ps, p), 'two') using 1:6 with linespoints lc rgb col[p] lw 1*psc pt 5 ps 0.5*psc notitle, \
             for [p = 1:words(ps)] sel(f, word(ps, p), 'direct') using 1:6 with linespoints lc rgb col[p] lw 1*psc dt 2 pt 4 ps 0.8*psc notitle
    }
    unset multiplot
}
