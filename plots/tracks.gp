# tracks.gp: which way of tracking A survives in which precision (issue 7): the inverse drift of
# vla3 (lmlike, d = 32, nudge off, reference lib in binary64) against t, one panel per precision,
# one line per way of tracking A; and a last panel of cost against accuracy: the time per step
# (bin/vla-scaling, one core) against the drift at the last checkpoint.
# Usage: gnuplot -e "dir='data'; out='figures/tracks'" plots/tracks.gp   (writes OUT.png and OUT.pdf)
# Reads DIR/tracks-vla3-PREC-TRACK.dat (bin/vla-drift) and DIR/tracks-cost.dat (columns:
# prec track ns_per_step a_drift, prec and track as 1-based indices into the lists below).
if (!exists("dir")) dir = 'data'
if (!exists("out")) out = 'figures/tracks'
precs = 'f32 f16 bf16 f16-f32 bf16-f32'
tracks = 'sm smsym joseph chol comp sr'   # file-name tokens
names = 'sm sm-sym joseph chol comp sr'
f(p, t) = sprintf('%s/tracks-vla3-%s-%s.dat', dir, p, t)
exists_file(n) = system(sprintf("test -s '%s' && echo 1 || echo 0", n)) + 0
set encoding utf8
set logscale xy
set format x '10^{%T}'
set format y '10^{%T}'
set grid xtics ytics lc rgb '#dddddd'
do for [k = 1:2] {
    if (k == 1) {
        set terminal pngcairo size 1650, 1000 font 'Sans,11' enhanced
        set output out.'.png'
        psc = 1
    } else {
        set terminal pdfcairo size 11in, 6.7in font 'Sans,8' enhanced
        set output out.'.pdf'
        psc = 0.6
    }
    array col[6] = ['#1f77b4', '#17becf', '#9467bd', '#2ca02c', '#d62728', '#ff7f0e']
    do for [i = 1:6] {
        set style line i lc rgb col[i] lw 2*psc pt (4 + 2*i) ps 0.6*psc
    }
    set multiplot layout 2, 3 title "Ways of tracking A: inverse drift ||A_t - A_t^{ref}||_F / ||A_t^{ref}||_F of vla3 (lmlike, d = 32, nudge off; reference: lib in f64)" font ',13'
    set xlabel 't (tokens)'
    set ylabel 'a\_drift'
    set yrange [1e-16 : 1e3]
    set key top left Left reverse samplen 2 box opaque
    do for [p = 1:5] {
        P = word(precs, p)
        set title P
        plot for [i = 1:6] (exists_file(f(P, word(tracks, i))) ? f(P, word(tracks, i)) : '/dev/null') \
             using 1:2 with linespoints ls i title word(names, i)
    }
    set title 'cost against accuracy: drift at t = 10^4 against time per step'
    set xlabel 'ns per step (vla3, d = 32, one core, CPU time)'
    set ylabel 'a\_drift at t = 10^4'
    set xrange [500 : 2e6]
    set key bottom right Right noreverse box opaque maxrows 6
    cost = dir.'/tracks-cost.dat'
    array pcol[5] = [0x000000, 0x1f77b4, 0xd62728, 0x2ca02c, 0xff7f0e]
    array tpt[6] = [6, 8, 10, 4, 12, 2]
    # shape: the way of tracking A; colour: the precision
    plot for [i = 1:6] cost using ($2 == i ? $3 : 1/0):4:(pcol[int($1)]) \
             with points pt tpt[i] ps 1.8*psc lw 2*psc lc rgb variable title word(names, i), \
         for [p = 1:5] NaN with points pt 5 ps 1.5*psc lc rgb sprintf('#%06x', pcol[p]) title word(precs, p)
    unset multiplot
}
