# forms-scan.gp: the scan form's error growth beside the sequential sum's
# (docs/forms.md): la on lmlike, d = 32, to 10^5 steps, the relative error of S and o against the
# exact recurrence in the sequential form (dashed), the scan in Blelloch's tree order (solid) and
# chunk:64 (dotted); and the time per token of each form on the CPU.
# Usage: gnuplot -e "dir='data'; out='figures/forms-scan'" plots/forms-scan.gp (OUT.png/pdf, OUT-1col.png/pdf)
# Reads DIR/forms-scan-la-lmlike.dat (bin/vla-forms --what sweep --forms seq,scan,chunk:64: t C
# prec s_relerr a_relerr o_relerr) and DIR/forms-scan-time-F.dat for F in seq c4 c16 c64 c256 scan
# (bin/vla-scaling --form F, by name: model prec track d T ns_per_step ...). The titles (model,
# stream, d, the timed precision) come from the tables.
if (!exists("dir")) dir = 'data'
if (!exists("out")) out = 'figures/forms-scan'
precs = 'f32 f16-f32 bf16-f32 f16-kern'
f = dir.'/forms-scan-la-lmlike.dat'
tforms = 'seq c4 c16 c64 c256 scan' # bin/vla-scaling --form seq, chunk:4, ..., scan
load system("dirname '" . ARG0 . "'") . '/tables.gp'
tseq = dir.'/forms-scan-time-seq.dat'
set encoding utf8
set logscale xy
set format x '10^{%T}'
set format y '10^{%T}'
set grid xtics ytics lc rgb '#dddddd'
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
    array col[4] = ['#1f77b4', '#2ca02c', '#9467bd', '#e377c2']
    set multiplot layout (k > 2 ? 3 : 1), (k > 2 ? 1 : 3) title (k > 2 ? '' : sprintf("%s on %s (d = %s): error against the exact recurrence, sequential (dashed), scan (solid), chunk:64 (dotted)", config(f, 'model'), stream_name(f), config(f, 'd'))) font ',12'
    set xlabel 't (tokens)'
    set key top left Left reverse box opaque font ',9'
    do for [j = 1:2] {
        set title sprintf('error of %s', j == 1 ? 'S' : 'o (its normalizer n is a sum too)')
        set ylabel 'relative error'
        plot for [p = 0:3] f using ($2 == -1 && strcol(3) eq word(precs, p + 1) ? $1 : 1/0):(column(j == 1 ? 4 : 6)) with linespoints lc rgb col[p + 1] lw 2*psc pt 7 ps 0.5*psc title word(precs, p + 1), \
             for [p = 0:3] f using ($2 == 0 && strcol(3) eq word(precs, p + 1) ? $1 : 1/0):(column(j == 1 ? 4 : 6)) with lines lc rgb col[p + 1] lw 1.5*psc dt 2 notitle, \
             for [p = 0:3] f using ($2 == 64 && strcol(3) eq word(precs, p + 1) ? $1 : 1/0):(column(j == 1 ? 4 : 6)) with lines lc rgb col[p + 1] lw 1.5*psc dt 3 notitle
    }
    set title sprintf('time per token on the CPU (%s, d = %s, one core)', word(header(tseq, 'precisions'), 1), word(header(tseq, 'ds'), 1))
    set xlabel 'form: 1 seq, C chunk:C, 512 scan'
    set ylabel 'ns per token'
    set format x '%g'
    set xtics ('seq' 1, 4, 16, 64, 256, 'scan' 512)
    set key top left
    array mc[3] = ['#1f77b4', '#ff7f0e', '#d62728']
    array mn[3] = ['la', 'delta', 'vla3']
    fx(i) = i == 1 ? 1 : i == 6 ? 512 : 4**(i - 1)
    plot for [m = 1:3] for [i = 1:6] dir.'/forms-scan-time-'.word(tforms, i).'.dat' \
        using (strcol(1) eq mn[m] ? fx(i) : 1/0):6 with points lc rgb mc[m] pt 7 ps psc title (i == 1 ? mn[m] : '')
    set xtics auto
    set format x '10^{%T}'
    unset multiplot
}
