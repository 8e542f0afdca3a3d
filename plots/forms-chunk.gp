# forms-chunk.gp: the chunk form against the exact recurrence (docs/forms.md): the
# relative error of S, A and o of vla3 against the exact sequential reference, as a function of
# the chunk size C (C = 1: the sequential form) for each precision, on lmlike at 10^5 steps and on
# the real trace; and against t for C = 64 beside the sequential form. The titles (model, stream,
# d, horizon, the reference's bits, the nudge) and the ranges come from the tables.
# Usage: gnuplot -e "dir='data'; out='figures/forms-chunk'" plots/forms-chunk.gp (OUT.png/pdf, OUT-1col.png/pdf)
# Reads DIR/forms-chunk-vla3-lmlike.dat and DIR/forms-chunk-vla3-trace.dat (bin/vla-forms --what
# sweep: columns t C prec s_relerr a_relerr o_relerr, a block per precision and form).
if (!exists("dir")) dir = 'data'
if (!exists("out")) out = 'figures/forms-chunk'
load system("dirname '" . ARG0 . "'") . '/tables.gp'
precs = 'f64 f32 f16 bf16 f16-f32 bf16-f32 f16-kern bf16-kern'
lm = dir.'/forms-chunk-vla3-lmlike.dat'
tr = dir.'/forms-chunk-vla3-trace.dat'
# each block's last row (its largest t): "t C prec s a o"
last(f) = sprintf("< awk '!/^#/ && NF { l = $0 } !NF && l != \"\" { print l; l = \"\" } END { if (l != \"\") print l }' %s", f)
cx(c) = c == 0 ? 1 : c   # the sequential form at C = 1
model = config(lm, 'model')
Tl = tmax(lm)
Tt = tmax(tr)
bits = system(sprintf("sed -n 's/^# reference: exact (MPFR, \\([0-9]*\\) bits.*/\\1/p' '%s' | head -1", lm))
# the reference the table was measured against: double-double where its check against MPFR passed
# (the exact_reference line), else MPFR at those bits
ref = header(lm, 'exact_reference')[1:13] eq 'double-double' ? 'double-double, checked against MPFR' \
      : sprintf('MPFR, %s bits', bits)
nudge = config(lm, 'nudge') eq 'off' ? 'nudge off' : sprintf('nudge every %s steps', config(lm, 'period'))
set encoding utf8
set logscale xy
set format y '10^{%T}'
set grid xtics ytics lc rgb '#dddddd'
set xtics (1, 2, 4, 8, 16, 32, 64, 128, 256)
# a double-column (7 in) and a single-column (3.4 in, OUT-1col) figure, each as PNG and PDF
do for [k = 1:4] {
    one = k > 2 ? '-1col' : ''
    if (k % 2 == 1) {
        set terminal pngcairo size (k > 2 ? 800 : 1650), (k > 2 ? 1500 : 1000) font 'Sans,11' enhanced
        set output out.one.'.png'
        psc = 1
    } else {
        set terminal pdfcairo size (k > 2 ? 3.4 : 7)*1in, (k > 2 ? 6.5 : 4.26)*1in font 'Sans,' . (k > 2 ? 6 : 8) enhanced
        set output out.one.'.pdf'
        psc = 0.6
    }
    array col[8] = ['#000000', '#1f77b4', '#d62728', '#ff7f0e', '#2ca02c', '#9467bd', '#e377c2', '#8c564b']
    do for [i = 1:8] {
        set style line i lc rgb col[i] lw 2*psc pt (4 + 2*(i % 6)) ps 0.7*psc
        set style line 10 + i lc rgb col[i] lw 1.5*psc dt 2
    }
    set multiplot layout (k > 2 ? 3 : 2), (k > 2 ? 2 : 3) title (k > 2 ? '' : sprintf("%s in the chunk form against the exact sequential recurrence (%s): relative error (%s; a missing point: not finite)", model, ref, nudge)) font ',13'
    set key bottom right Right noreverse samplen 2 box opaque maxrows 4 font ',9'
    set xlabel 'C (chunk size; 1: the sequential form)'
    set autoscale y
    set offsets 0, 0, 0, graph 0.35  # room below the curves for the key
    array q[3] = ['S', 'A', 'o']
    do for [j = 1:3] {
        set title sprintf("%s, d = %s, t = %s: error of %s", stream_name(lm), config(lm, 'd'), gprintf('%.0f', Tl), q[j])
        set ylabel sprintf('||%s - %s_{exact}|| / ||%s_{exact}||', q[j], q[j], q[j])
        plot for [p = 0:7] last(lm) using (strcol(3) eq word(precs, p + 1) ? cx($2) : 1/0):(column(3 + j)) \
             with linespoints ls p + 1 title word(precs, p + 1)
    }
    set title sprintf("%s (t = %s): S (solid), o (dashed)", stream_name(tr), gprintf('%.0f', Tt))
    set ylabel 'relative error'
    plot for [p = 0:7] last(tr) using (strcol(3) eq word(precs, p + 1) ? cx($2) : 1/0):4 with linespoints ls p + 1 title word(precs, p + 1), \
         for [p = 0:7] last(tr) using (strcol(3) eq word(precs, p + 1) ? cx($2) : 1/0):6 with lines ls 11 + p notitle
    set xtics auto
    set format x '10^{%T}'
    set xlabel 't (tokens)'
    set xrange [tmin(lm) / 1.2 : Tl * 1.2]
    do for [j = 1:2] {
        set title sprintf("%s: error of %s against t, chunk:64 (solid), seq (dashed)", stream_name(lm), j == 1 ? 'S' : 'o')
        set ylabel 'relative error'
        plot for [p = 0:7] lm using ($2 == 64 && strcol(3) eq word(precs, p + 1) ? $1 : 1/0):(column(j == 1 ? 4 : 6)) with linespoints ls p + 1 title word(precs, p + 1), \
             for [p = 0:7] lm using ($2 == 0 && strcol(3) eq word(precs, p + 1) ? $1 : 1/0):(column(j == 1 ? 4 : 6)) with lines ls 11 + p notitle
    }
    unset multiplot
    set offsets 0, 0, 0, 0
    set xrange [*:*]
    set format x '%g'
    set xtics (1, 2, 4, 8, 16, 32, 64, 128, 256)
}
