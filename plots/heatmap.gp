# heatmap.gp: the penalty inverse A_t and M_t side by side at the snapshot steps of one
# bin/vla-heatmap table, one row per snapshot, with both diagonals in a third column. Each map's
# colour scale is symmetric about 0 and set by its largest off-diagonal entry, so that the
# off-diagonal structure shows; the diagonal then saturates, and the right column gives its values.
# Usage: gnuplot -e "dir='data'; out='figures/heatmap'" plots/heatmap.gp
#   reads DIR/heatmap-vla3-f32.dat (or in='TABLE'); writes OUT.pdf/png and OUT-1col.pdf/png
if (!exists("out")) out = 'figures/heatmap'
load system("dirname '" . ARG0 . "'") . '/style.gp'
if (!exists("in")) in = dir . '/heatmap-vla3-f32.dat'
if (!have(in)) { print 'heatmap.gp: missing ' . in; exit status 1 }

n = header(in, 'snapshots') + 0
if (n < 1) { print sprintf("heatmap.gp: %s holds no snapshot", in); exit status 1 }
d = real(config(in, 'd'))
array T[n]
array src[n]
do for [s = 0 : n - 1] {
    stats in index s using 1 nooutput
    T[s + 1] = STATS_max
    stats in index s using 6 nooutput
    src[s + 1] = STATS_max
}
set palette defined (-1 '#2166ac', -0.5 '#92c5de', 0 'white', 0.5 '#f4a582', 1 '#b2182b')

do for [cols in SIZES] {
    c = cols + 0
    # the single-column figure leaves out the diagonals' column
    eval begin(c, c == 2 ? 6.6 : 4.9)
    G_rows = n; G_cols = c == 2 ? 3 : 2
    if (c == 2) {
        G_left = 0.055; G_right = 0.985; G_bottom = 0.06; G_top = 0.95; G_hsp = 0.13; G_vsp = 0.085
    } else {
        G_left = 0.09; G_right = 0.82; G_bottom = 0.07; G_top = 0.95; G_hsp = 0.22; G_vsp = 0.1
    }
    set multiplot
    unset grid
    set tics out nomirror scale 0.5
    set border 15
    do for [s = 1 : n] {
        do for [k = 1:2] {
            cc = k + 3    # column 4: A_t, 5: M_t
            eval panel(G_cols * (s - 1) + k)
            set autoscale xy
            unset logscale
            stats in index s - 1 using (column(2) != column(3) ? abs(column(cc)) : NaN) nooutput
            lim = STATS_max > 0 ? STATS_max : 1
            set cbrange [-lim : lim]
            set cbtics (sprintf('%.2g', -lim) -lim, '0' 0, sprintf('%.2g', lim) lim) scale 0.4
            set colorbox default
            set xrange [-0.5 : d - 0.5]
            set yrange [d - 0.5 : -0.5]
            set xtics 0, 8, d - 1
            set ytics 0, 8, d - 1
            set format x '%g'
            set format y '%g'
            set xlabel (s == n ? '{/:Italic j}' : '')
            set ylabel (k == 1 ? '{/:Italic i}' : '')
            set title (k == 1 ? sprintf('{/:Italic A_t}, {/:Italic t} = %s', gprintf('%g', T[s])) : \
                       sprintf('{/:Italic M_t}%s, {/:Italic t} = %s', src[s] > 0.5 && c == 2 ? ' = {/:Italic A_t}^{-1}' : '', gprintf('%g', T[s])))
            plot in index s - 1 using 3:2:cc with image
        }
        if (c == 1) { continue }
        eval panel(3 * s)
        unset colorbox
        set border 3
        set grid xtics ytics back ls 100, ls 100
        set autoscale xy
        set xrange [-0.5 : d - 0.5]
        set logscale y
        set format y '10^{%T}'
        stats in index n + s - 1 using 4 nooutput
        lo = STATS_min; hi = STATS_max
        stats in index n + s - 1 using 5 nooutput
        lo = STATS_min < lo ? STATS_min : lo; hi = STATS_max > hi ? STATS_max : hi
        set yrange [lo / 2 : hi * 10]
        set xlabel (s == n ? '{/:Italic i}' : '')
        set ylabel 'diagonal entry'
        set title sprintf('diagonals, {/:Italic t} = %s', gprintf('%g', T[s]))
        eval keystyle
        set key inside top right horizontal Left reverse samplen 1 font ',7'
        plot in index n + s - 1 using 2:4 w lp pt 7 ps 0.35 lw 1.2 lc rgb '#b2182b' t '({/:Italic A_t})_{ii}', \
             in index n + s - 1 using 2:5 w lp pt 5 ps 0.35 lw 1.2 lc rgb '#2166ac' t '({/:Italic M_t})_{ii}'
        unset key
        unset grid
        set border 15
    }
    eval finish(c)
}
