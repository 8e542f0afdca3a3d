# guards.gp: how often the safety devices fire, per precision (bin/vla-drift's guard and clamp
# columns against t): vla1's norm clamp, rls's skip-and-fallback guard on an ill-conditioned
# stream, and vla3's delta floor with the nudge off. Cumulative counts on log axes; a precision
# with no event at all cannot sit on a log axis, so each panel names those in a note. Equal
# counts overlap: lines and open points shrink along the list so that each stays visible.
# Usage: gnuplot -e "dir='data'; out='figures/guards'" plots/guards.gp   (writes OUT.png and OUT.pdf)
# Reads DIR/guards-vla1-PREC.dat, DIR/guards-rls-PREC.dat, DIR/drift-vla3-PREC-nudgeoff.dat.

if (!exists("dir")) dir = 'data'
if (!exists("out")) out = 'figures/guards'
if (!exists("precs")) precs = 'f32 f16 bf16 f16-f32 bf16-f32'

set encoding utf8
np = words(precs)
f(kind, p) = (kind eq 'vla3') ? sprintf('%s/drift-vla3-%s-nudgeoff.dat', dir, p) \
                              : sprintf('%s/guards-%s-%s.dat', dir, kind, p)
# the largest count in column c of a file (0 when it never fired)
maxcol(file, c) = system(sprintf("awk '!/^#/ && NF && $%d > m {m = $%d} END {print m+0}' '%s'", c, c, file)) + 0

set logscale xy
set format x '10^{%T}'
set format y '10^{%T}'
set grid xtics ytics lc rgb '#dddddd'
set xlabel 't (tokens)'
set ylabel 'events so far'
set key top left Left reverse samplen 2 box opaque

array col[3] = [9, 8, 8]
array kinds[3] = ['vla1', 'rls', 'vla3']
array titles[3] = ['vla1, gauss:10: norm clamp (||S||_F or ||A||_F > 1000)', \
                   'rls, subspace:4,0.001, λ_0 = 10^{-3}, guard on: |δ| < 10^{-6} or δ not finite', \
                   'vla3, lmlike, nudge off: δ floored at 10^{-4}']
array colors[5] = ['#1f77b4', '#ff7f0e', '#2ca02c', '#9467bd', '#8c564b']
array pts[5] = [6, 4, 8, 10, 12]
# where a precision explains itself: a note under the key (the mechanism, checked on the data)
array notes[3] = ["f16: ||S||_F^2 > 65504 overflows,\nso once ||S||_F > 256 the clamp\nfires at every step", \
                  "f16: z_i z_j overflows binary16 at step 1 (A_0 = 1000 I)\nbf16: A_t indefinite, then NaN", \
                  "f16, f16-f32: A_t indefinite, one floor,\nthen A_t overflows to NaN (the floor does\nnot catch a NaN δ: no more events)"]
array noteY[3] = [0.42, 0.3, 0.2]   # clear of the curves of each panel

do for [k = 1:2] {
    if (k == 1) {
        set terminal pngcairo size 1800, 620 font 'Sans,11' enhanced
        set output out.'.png'
        psc = 1
    } else {
        set terminal pdfcairo size 13in, 4.5in font 'Sans,8' enhanced
        set output out.'.pdf'
        psc = 0.6   # cairo draws pdf points and lines larger beside its text
    }
    set multiplot layout 1, 3 title 'Safety-device events per precision (d = 32; nudges, not shown: one every period, t / period, in every precision)' font ',13'
    do for [j = 1:3] {
        quietlist = ''
        do for [i = 1:np] {
            if (maxcol(f(kinds[j], word(precs, i)), col[j]) == 0) {
                quietlist = quietlist.(strlen(quietlist) ? ', ' : '').word(precs, i)
            }
        }
        set title titles[j]
        set xrange [1 : *]
        set autoscale xfixmax
        set yrange [0.3 : 5e5]
        unset label 1
        unset label 2
        if (strlen(notes[j])) {
            set label 2 notes[j] at graph 0.97, graph noteY[j] right front font ',10'
        }
        if (strlen(quietlist)) {
            set label 1 'no event: '.quietlist at graph 0.97, graph 0.05 right front
        }
        plot x w l lc rgb '#888888' dt 2 lw 1.5*psc t 'one per step', \
             for [i = 1:np] f(kinds[j], word(precs, i)) u 1:(column(col[j]) > 0 ? column(col[j]) : NaN) \
                 w lp lc rgb colors[i] pt pts[i] ps (1.5 - 0.2 * i) * psc lw (3.2 - 0.5 * i) * psc \
                 t word(precs, i)
    }
    unset multiplot
    unset output
}
