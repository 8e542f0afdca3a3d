# statenorm-long.gp: vla3 over 10^7 tokens (docs/math.md section 10, claims 1 and 6) in five
# precisions, from bin/vla-statenorm tables of 8 heads each beside a binary64 run of the same inputs
# (--ref f64): (a) ||S_t||_F, (b) ||A_t||_F, (c) the relative error of S_t and (d) of the read-out
# o_t against binary64. Lines: the mean over the heads still finite; bands: their range (in (a) and
# (b), where the precisions' ranges overlap, binary64's only); crosses: where a head turns NaN (at
# its last finite value); binary64 (black, dashed) is the same recurrence with the least rounding.
# Usage: gnuplot -e "dir='data'; out='figures/statenorm-long'" plots/statenorm-long.gp reads
# DIR/statenorm-long-vla3-PREC.dat for PREC in f64 f32 f16-f32 f16 bf16; writes OUT.pdf/png and
# OUT-1col.pdf/png
if (!exists("out")) out = 'figures/statenorm-long'
load system("dirname '" . ARG0 . "'") . '/style.gp'

LP = 'f32 f16-f32 f16 bf16 f64'   # f64 last: drawn on top
tab(p) = dir . '/statenorm-long-vla3-' . p . '.dat'
do for [p in LP] {
    if (!have(tab(p))) { print 'statenorm-long.gp: missing ' . tab(p); exit status 1 }
}
T = tmax(tab('f32'))
runs = header(tab('f32'), 'runs')
lw(p) = p eq 'f64' ? 1.5 : 2
dt(p) = p eq 'f64' ? 2 : 1
array cols[4] = [2, 3, 6, 7]
array ylab[4] = ['‖{/:Italic S_t}‖_F', '‖{/:Italic A_t}‖_F', 'relative error of {/:Italic S_t}', 'relative error of {/:Italic o_t}']
array ttl[4] = ['(a) state norm', '(b) norm of the tracked inverse', '(c) {/:Italic S_t} against binary64', '(d) read-out {/:Italic o_t} against binary64']
# panels (c), (d) compare with binary64: every precision but f64
panel_precs(k) = k <= 2 ? LP : 'f32 f16-f32 f16 bf16'

do for [cols_ in SIZES] {
    c = cols_ + 0
    eval begin(c, c == 2 ? 4.9 : 7.6)
    if (c == 2) {
        G_rows = 2; G_cols = 2; G_left = 0.08; G_right = 0.99; G_bottom = 0.09; G_top = 0.88
        G_hsp = 0.07; G_vsp = 0.12
    } else {
        G_rows = 4; G_cols = 1; G_left = 0.16; G_right = 0.97; G_bottom = 0.05; G_top = 0.88
        G_vsp = 0.065
    }
    eval keyarea(c == 2 ? 8 : 4)
    plot for [p in LP] NaN w l lw lw(p) dt dt(p) lc rgb prec_color(p) t p, \
         NaN w filledcurves fs transparent solid 0.2 noborder lc rgb '#888888' t 'range of heads', \
         NaN w p pt PT_END ps PS lc rgb '#444444' t 'end', \
         NaN w p pt PT_NAN ps 1.1 lw 2 lc rgb '#444444' t 'head turns NaN'
    eval keydone
    set logscale xy
    set format x '10^{%T}'
    set format y '10^{%T}'
    set xrange [1 : T * 2]
    set xtics auto
    do for [k = 1:4] {
        eval panel(k)
        set title ttl[k]
        set ylabel ylab[k]
        set xlabel (c == 2 && k <= 2) || (c == 1 && k <= 3) ? '' : '{/:Italic t} (tokens)'
        # the ranges from the tables (the default run's were [0.8, 12], [2, 200], [1e-9, 10],
        # [1e-9, 1e6]: another run's curves must not be cropped)
        set autoscale y
        set ytics auto
        set format y (k <= 2 ? '%g' : '10^{%T}')
        # (a), (b): the precisions' ranges overlap; only binary64's is drawn
        plot for [p in (k <= 2 ? 'f64' : panel_precs(k))] band(tab(p), cols[k]) u 1:3:4 w filledcurves fs transparent solid (k <= 2 ? 0.15 : 0.2) noborder lc rgb (k <= 2 ? '#777777' : prec_color(p)), \
             for [p in panel_precs(k)] band(tab(p), cols[k]) u 1:2 w l lw lw(p) dt dt(p) lc rgb prec_color(p), \
             for [p in panel_precs(k)] band(tab(p), cols[k]) . ' | tail -1' u 1:2 w p pt PT_END ps PS lc rgb prec_color(p), \
             for [p in panel_precs(k)] ends(tab(p), cols[k]) u 1:($3 > 0 ? $2 : NaN) w p pt PT_NAN ps 1.1 lw 2 lc rgb prec_color(p)
    }
    eval finish(c)
}
