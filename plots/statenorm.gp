# statenorm.gp: ||S_t||_F against t for la, delta, rls, vla1 and vla3 (docs/math.md section 10,
# claims 1 and 3): (a) the synthetic lmlike stream to its longest horizon, (b) the real trace of the
# source notebook's layer (T = 1000) with the notebook's own PyTorch curves on ours. Lines: the mean
# over the heads; bands: their range; dots: the end of each mean. The panels' titles (stream, heads)
# and the trace's horizon come from the tables' headers. Usage: gnuplot -e "dir='data';
# out='figures/statenorm'; shared='../shared'" plots/statenorm.gp reads
# DIR/statenorm-{lmlike,trace}-MODEL.dat (bin/vla-statenorm) and, when there,
# SHARED/data/lmtrace-seed7/exp2_notebook_traj.tsv; writes OUT.pdf/png and OUT-1col.pdf/png
if (!exists("out")) out = 'figures/statenorm'
load system("dirname '" . ARG0 . "'") . '/style.gp'

syn(m) = dir . '/statenorm-lmlike-' . m . '.dat'
trc(m) = dir . '/statenorm-trace-' . m . '.dat'
nb = shared . '/data/lmtrace-seed7/exp2_notebook_traj.tsv'
nbname(m) = m eq 'la' ? 'linear' : m eq 'delta' ? 'deltanet' : m eq 'vla3' ? 'vla' : ''
do for [m in MODELS] {
    if (!have(syn(m)) || !have(trc(m))) {
        print sprintf('statenorm.gp: missing %s or %s (make figures writes them)', syn(m), trc(m))
        exit status 1
    }
}
have_nb = have(nb)
T = tmax(syn('vla3'))
# the panels' titles and ranges from the tables: their stream (a trace by its last two folders),
# heads and horizon
Tb = tmax(trc('vla3'))
trace_name = system(sprintf("sed -n 's|^# stream: trace:||p' '%s' | head -1 | sed 's|/*$||; s|.*/\\([^/]*/[^/]*\\)$|\\1|'", trc('vla3')))
# the notebook's 1000 points, one mark every 1/12 decade of t
sparse(t) = (t == 1 || floor(12 * log10(t)) != floor(12 * log10(t - 1)))

do for [cols in SIZES] {
    c = cols + 0
    eval begin(c, c == 2 ? 2.9 : 5.3)
    if (c == 2) {
        G_rows = 1; G_cols = 2; G_left = 0.075; G_right = 0.99; G_bottom = 0.14; G_top = 0.8
        G_hsp = 0.075
    } else {
        G_rows = 2; G_cols = 1; G_left = 0.16; G_right = 0.96; G_bottom = 0.085; G_top = 0.83
        G_vsp = 0.14
    }
    eval keyarea(c == 2 ? 4 : 3)
    plot for [m in MODELS] NaN w l lw 2 lc rgb model_color(m) t m, \
         NaN w p pt 6 ps 0.7 lc rgb '#444444' t 'PyTorch notebook', \
         NaN w p pt 3 ps 1.3 lw 1.5 lc rgb '#444444' t 'claim 3'
    eval keydone
    set logscale xy
    set format x '10^{%T}'
    set format y '10^{%T}'
    set xlabel '{/:Italic t} (tokens)'
    set ylabel '‖{/:Italic S_t}‖_F'

    eval panel(1)
    set title sprintf('(a) synthetic %s stream, %s heads', header(syn('vla3'), 'stream'), header(syn('vla3'), 'runs'))
    set xrange [1 : T * 1.5]
    set autoscale y  # (with the claim's marks)
    set arrow 1 from 1000, graph 0 to 1000, graph 1 nohead dt 3 lc rgb REF
    # (labels are not clipped: one beyond the panel's horizon would land in the next panel)
    set label 1 '∝ {/:Italic t}^{1/2}' at T / 30, 2.5 * sqrt(T / 30) * 3 center tc rgb REF
    plot for [m in MODELS] band(syn(m), 2) u 1:3:4 w filledcurves fs transparent solid 0.22 noborder lc rgb model_color(m), \
         for [m in MODELS] band(syn(m), 2) u 1:2 w l lw 2 lc rgb model_color(m), \
         for [m in MODELS] band(syn(m), 2) . ' | tail -1' u 1:2 w p pt PT_END ps PS lc rgb model_color(m), \
         2.5 * sqrt(x) w l dt 2 lw 1.2 lc rgb REF, \
         '+' u (1000):(1633.9) every ::0::0 w p pt 3 ps 1.3 lw 1.5 lc rgb model_color('la'), \
         '+' u (1000):(14.52) every ::0::0 w p pt 3 ps 1.3 lw 1.5 lc rgb model_color('vla3')
    unset arrow 1
    unset label 1

    eval panel(2)
    set title sprintf('(b) real trace %s, %s heads', trace_name, header(trc('vla3'), 'runs'))
    set xrange [1 : Tb * 1.5]
    set autoscale y
    set label 1 '∝ {/:Italic t}' at Tb / 3, 2 * Tb / 3 * 3 right tc rgb REF
    plot for [m in MODELS] band(trc(m), 2) u 1:3:4 w filledcurves fs transparent solid 0.22 noborder lc rgb model_color(m), \
         for [m in MODELS] band(trc(m), 2) u 1:2 w l lw 2 lc rgb model_color(m), \
         for [m in MODELS] band(trc(m), 2) . ' | tail -1' u 1:2 w p pt PT_END ps PS lc rgb model_color(m), \
         2 * x w l dt 4 lw 1.2 lc rgb REF, \
         for [m in 'la delta vla3'] (have_nb ? nb : '/dev/null') \
             u 2:((strcol(1) eq nbname(m) && sparse($2)) ? $3 : NaN) w p pt 6 ps 0.7 lc rgb model_color(m), \
         '+' u (1000):(1633.9) every ::0::0 w p pt 3 ps 1.3 lw 1.5 lc rgb model_color('la'), \
         '+' u (1000):(14.52) every ::0::0 w p pt 3 ps 1.3 lw 1.5 lc rgb model_color('vla3')
    unset label 1
    eval finish(c)
}
