# forms-scan.gp: the scan form's error growth beside the sequential sum's (issue 16,
# docs/forms.md): la on lmlike, d = 32, to 10^5 steps, the relative error of S and o against the
# exact recurrence in the sequential form (dashed), the scan in Blelloch's tree order (solid) and
# chunk:64 (dotted); and the time per token of each form on the CPU.
# Usage: gnuplot -e "dir='data'; out='figures/forms-scan'" plots/forms-scan.gp (OUT.png, OUT.pdf)
# Reads DIR/forms-sweep-la-lmlike.dat (bin/vla-forms --what sweep --forms seq,scan,chunk:64: t C
# prec s_relerr a_relerr o_relerr) and DIR/forms-time.dat (form model ns_per_token; form 0 seq,
# -1 scan, else C; model 0 la, 1 delta, 4 vla3).
if (!exists("dir")) dir = 'data'
if (!exists("out")) out = 'figures/forms-scan'
precs = 'f32 f16-f32 bf16-f32 f16-kern'
f = dir.'/forms-sweep-la-lmlike.dat'
tm = dir.'/forms-time.dat'
set encoding utf8
set logscale xy
set format x '10^{%T}'
set format y '10^{%T}'
set grid xtics ytics lc rgb '#dddddd'
do for [k = 1:2] {
    if (k == 1) {
        set terminal pngcairo size 1500, 560 font 'Sans,11' enhanced
        set output out.'.png'
        psc = 1
    } else {
        set terminal pdfcairo size 10in, 3.7in font 'Sans,8' enhanced
        set output out.'.pdf'
        psc = 0.6
    }
    array col[4] = ['#1f77b4', '#2ca02c', '#9467bd', '#e377c2']
    set multiplot layout 1, 3 title "la on lmlike (d = 32): error against the exact recurrence, sequential (dashed), scan (solid), chunk:64 (dotted)" font ',12'
    set xlabel 't (tokens)'
    set key top left Left reverse box opaque font ',9'
    do for [j = 1:2] {
        set title sprintf('error of %s', j == 1 ? 'S' : 'o (its normalizer n is a sum too)')
        set ylabel 'relative error'
        plot for [p = 0:3] f using ($2 == -1 && $3 == p ? $1 : 1/0):(column(j == 1 ? 4 : 6)) with linespoints lc rgb col[p + 1] lw 2*psc pt 7 ps 0.5*psc title word(precs, p + 1), \
             for [p = 0:3] f using ($2 == 0 && $3 == p ? $1 : 1/0):(column(j == 1 ? 4 : 6)) with lines lc rgb col[p + 1] lw 1.5*psc dt 2 notitle, \
             for [p = 0:3] f using ($2 == 64 && $3 == p ? $1 : 1/0):(column(j == 1 ? 4 : 6)) with lines lc rgb col[p + 1] lw 1.5*psc dt 3 notitle
    }
    set title 'time per token on the CPU (f32, d = 32, one core)'
    set xlabel 'form: 1 seq, C chunk:C, 512 scan'
    set ylabel 'ns per token'
    set format x '%g'
    set xtics ('seq' 1, 4, 16, 64, 256, 'scan' 512)
    set key top left
    array mc[3] = ['#1f77b4', '#ff7f0e', '#d62728']
    array mn[3] = ['la', 'delta', 'vla3']
    array mi[3] = [0, 1, 4]
    fx(c) = c == 0 ? 1 : c < 0 ? 512 : c
    plot for [m = 1:3] tm using ($2 == mi[m] ? fx($1) : 1/0):3 with linespoints lc rgb mc[m] lw 2*psc pt 7 title mn[m]
    set xtics auto
    set format x '10^{%T}'
    unset multiplot
}
