# heatmap.gp: the penalty inverse A_t and M_t side by side at the snapshot steps of one
# bin/vla-heatmap table, one row per snapshot, with both diagonals in a third column. The colour
# scale of each map is symmetric about 0 and set by its largest off-diagonal entry, so that the
# off-diagonal structure shows; the diagonal then saturates, and the right column gives its values.
# Usage: gnuplot -e "in='data/heatmap-vla3-f32.dat'; out='figures/heatmap'" plots/heatmap.gp
#        (writes OUT.png and OUT.pdf)

if (!exists("in")) in = 'data/heatmap-vla3-f32.dat'
if (!exists("out")) out = 'figures/heatmap'

set encoding utf8
meta(key) = system(sprintf("sed -n 's/^# %s: //p' '%s' | head -1", key, in))
n = meta('snapshots') + 0
if (n < 1) { print sprintf("heatmap.gp: %s holds no snapshot", in); exit status 1 }
cfg = meta('config')
field(s, k) = (p = strstrt(s, k.'='), p ? word(s[p + strlen(k) + 1 :], 1) : '?')
d = field(cfg, 'd') + 0
what = sprintf('%s, %s, %s, d = %d, nudge %s, stream %s', field(cfg, 'model'), field(cfg, 'track'), \
               field(cfg, 'prec'), d, field(cfg, 'nudge'), meta('stream'))

set palette defined (-1 '#2166ac', -0.5 '#92c5de', 0 'white', 0.5 '#f4a582', 1 '#b2182b')
set tics out nomirror scale 0.5
set cbtics scale 0.5

do for [k = 1:2] {
    if (k == 1) {
        set terminal pngcairo size 1500, 430 * n + 60 font 'Sans,10' enhanced
        set output out.'.png'
        psc = 1
    } else {
        set terminal pdfcairo size 11, 3.2 * n + 0.4 font 'Sans,8' enhanced   # inches
        set output out.'.pdf'
        psc = 0.6   # cairo draws pdf points and lines larger beside its text
    }
    set multiplot layout n, 3 title 'A_t and M_t ('.what.')' font ',12'
    do for [s = 0 : n - 1] {
        # stats obeys the current ranges: clear the last panel's before asking it
        set autoscale xy
        unset logscale y
        stats in index s using 1 nooutput
        t = STATS_max
        stats in index s using 6 nooutput
        src = STATS_max
        do for [c = 4:5] {
            set autoscale xy
            stats in index s using (column(2) != column(3) ? abs(column(c)) : NaN) nooutput
            lim = STATS_max > 0 ? STATS_max : 1
            set cbrange [-lim : lim]
            set size ratio -1
            set xrange [-0.5 : d - 0.5]
            set yrange [d - 0.5 : -0.5]
            set xlabel 'j'
            set ylabel 'i'
            set title (c == 4 ? sprintf('A_t, t = %d', t) : \
                       sprintf('M_t = %s, t = %d', src > 0.5 ? 'inv(A_t)' : 'Gram λ_0 I + Σ u''u''^T', t)) \
                      .'  (diagonal saturates)'
            unset key
            plot in index s using 3:2:c with image notitle
        }
        set size noratio
        set autoscale xy
        set xrange [-0.5 : d - 0.5]
        set logscale y
        set format y '10^{%T}'
        set xlabel 'i'
        set ylabel 'diagonal entry'
        set title sprintf('diagonals, t = %d', t)
        set key below horizontal samplen 2
        plot in index n + s using 2:4 w lp pt 7 ps 0.5 * psc lw 1.5 * psc lc rgb '#b2182b' t '(A_t)_{ii}', \
             in index n + s using 2:5 w lp pt 5 ps 0.5 * psc lw 1.5 * psc lc rgb '#2166ac' t '(M_t)_{ii}'
        set format y '%g'
    }
    unset multiplot
    unset output
}
