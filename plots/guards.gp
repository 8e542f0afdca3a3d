# guards.gp: when the safety devices fire, per precision (bin/vla-drift's guard and clamp counts):
# (a) vla1's norm clamp on gauss:10 and (b) rls's skip-and-fallback guard on an ill-conditioned
# stream, cumulative events against t; (c) vla3 with the nudge off: lambda_min(A_t) against t, with
# the checkpoint by which its delta floor first fired marked, so that one sees it fire only after
# A_t has stopped being positive definite. A precision with no event is named in its panel. The
# titles (model, stream, nudge) and the ranges come from the tables.
# Usage: gnuplot -e "dir='data'; out='figures/guards'" plots/guards.gp
#   reads DIR/guards-{vla1,rls}-PREC.dat and DIR/drift-vla3-PREC-nudgeoff.dat; writes OUT.pdf/png,
#   OUT-1col.pdf/png
if (!exists("out")) out = 'figures/guards'
load system("dirname '" . ARG0 . "'") . '/style.gp'

np = words(PRECS)
f(kind, p) = (kind eq 'vla3') ? sprintf('%s/drift-vla3-%s-nudgeoff.dat', dir, p) \
                              : sprintf('%s/guards-%s-%s.dat', dir, kind, p)
do for [k in 'vla1 rls vla3'] {
    do for [p in PRECS] {
        if (!have(f(k, p))) { print 'guards.gp: missing ' . f(k, p); exit status 1 }
    }
}
# the largest count in column c (0: the device never fired)
maxcol(file, c) = real(system(sprintf("awk '!/^#/ && NF && $%d + 0 > m { m = $%d + 0 } END { print m + 0 }' '%s'", c, c, file)))
array col[3] = [9, 8, 8]
array kinds[3] = ['vla1', 'rls', 'vla3']
array quietlist[3]
do for [j = 1:3] {
    quietlist[j] = ''
    do for [p in PRECS] {
        if (maxcol(f(kinds[j], p), col[j]) == 0) {
            quietlist[j] = quietlist[j] . (strlen(quietlist[j]) ? ', ' : '') . p
        }
    }
}
# the first checkpoint where the guard count is positive: "t lambda_min" (lambda_min: the last
# finite one up to there, since A_t may be NaN by then)
firstguard(file) = sprintf("< awk '!/^#/ && NF { if ($6 !~ /nan|inf/) l = $6; if ($8 + 0 > 0) { print $1, l; exit } }' '%s'", file)

do for [cols in SIZES] {
    c = cols + 0
    eval begin(c, c == 2 ? 2.7 : 6.4)
    if (c == 2) {
        G_rows = 1; G_cols = 3; G_left = 0.075; G_right = 0.985; G_bottom = 0.16; G_top = 0.76
        G_hsp = 0.085
    } else {
        G_rows = 3; G_cols = 1; G_left = 0.18; G_right = 0.96; G_bottom = 0.06; G_top = 0.84
        G_vsp = 0.065
    }
    eval keyarea(c == 2 ? 6 : 4)
    plot for [i = 1:np] NaN w lp lw 1.5 pt (5 + 2 * i) ps 0.55 lc rgb prec_color(word(PRECS, i)) t word(PRECS, i), \
         NaN w l dt 2 lw 1.2 lc rgb REF t 'one per step', \
         NaN w p pt PT_END ps PS lc rgb '#444444' t 'end', \
         NaN w p pt PT_NAN ps 1.1 lw 2 lc rgb '#444444' t 'NaN', \
         NaN w p pt 4 ps 1.3 lw 1.5 lc rgb '#444444' t 'δ floor fired'
    eval keydone
    set logscale xy
    set format x '10^{%T}'
    set format y '10^{%T}'
    T = tmax(f('vla1', 'f32')) > tmax(f('rls', 'f32')) ? tmax(f('vla1', 'f32')) : tmax(f('rls', 'f32'))
    set xrange [1 : T * 1.5]
    set xtics auto
    set xlabel '{/:Italic t} (tokens)'
    set ylabel 'events so far'
    set yrange [0.5 : T * 1.5]  # at most one event a step
    array titles[2] = [sprintf('(a) %s, %s: norm clamp', config(f('vla1', 'f32'), 'model'), stream_name(f('vla1', 'f32'))), \
                       sprintf('(b) %s, %s: guard', config(f('rls', 'f32'), 'model'), stream_name(f('rls', 'f32')))]
    do for [j = 1:2] {
        eval panel(j)
        set title titles[j]
        set xlabel (c == 1 ? '' : '{/:Italic t} (tokens)')
        if (strlen(quietlist[j])) {
            set label 1 "no event:\n" . quietlist[j] at graph 0.97, graph 0.14 right front
        }
        # equal counts overlap: each precision's marks sit on every np-th checkpoint, staggered
        plot x w l dt 2 lw 1.2 lc rgb REF, \
             for [i = 1:np] f(kinds[j], word(PRECS, i)) u 1:(column(col[j]) > 0 ? column(col[j]) : NaN) \
                 w l lw 1.5 lc rgb prec_color(word(PRECS, i)), \
             for [i = 1:np] f(kinds[j], word(PRECS, i)) every np::(i - 1) u 1:(column(col[j]) > 0 ? column(col[j]) : NaN) \
                 w p pt (5 + 2 * i) ps 0.55 lc rgb prec_color(word(PRECS, i)), \
             for [i = 1:np] lastrow(f(kinds[j], word(PRECS, i))) u 1:(column(col[j]) > 0 ? column(col[j]) : NaN) \
                 w p pt PT_END ps PS lc rgb prec_color(word(PRECS, i))
        unset label 1
    }
    # (c) lambda_min on an axis that passes through 0: asinh keeps the small ones apart
    eval panel(3)
    set title sprintf('(c) %s, %s, nudge %s', config(f('vla3', 'f32'), 'model'), stream_name(f('vla3', 'f32')), config(f('vla3', 'f32'), 'nudge'))
    set xrange [1 : tmax(f('vla3', 'f32')) * 1.5]
    set xlabel '{/:Italic t} (tokens)'
    set ylabel 'λ_{min}({/:Italic A_t})'
    unset logscale y
    s = 1e-4
    set nonlinear y via asinh(y / s) inverse s * sinh(y)
    # the range of lambda_min over every table, widened to the ticks' decades
    lmin = real(system(sprintf("cat %s | awk '!/^#/ && NF && $6 !~ /nan|inf/ { v = $6 + 0; if (v < m) m = v; if (v > M) M = v } END { print m + 0 }'", sprintf('%s/drift-vla3-*-nudgeoff.dat', dir))))
    lmax = real(system(sprintf("cat %s | awk '!/^#/ && NF && $6 !~ /nan|inf/ { v = $6 + 0; if (v > M) M = v } END { print M + 0 }'", sprintf('%s/drift-vla3-*-nudgeoff.dat', dir))))
    set yrange [lmin < -1e-3 ? 2 * lmin : -1e-2 : lmax > 1e-3 ? 2 * lmax : 1e-2]
    set ytics ('-10' -10, '-0.1' -0.1, '-10^{-3}' -1e-3, '0' 0, '10^{-3}' 1e-3, '0.1' 0.1, '10' 10, '10^3' 1e3)
    set format y '%g'
    if (strlen(quietlist[3])) {
        set label 1 "δ floor never fired:\n" . quietlist[3] at graph 0.03, graph 0.1 left front
    }
    plot 0 w l lw 1 lc rgb REF, \
         for [i = 1:np] f('vla3', word(PRECS, i)) u 1:6 w l lw 1.5 lc rgb prec_color(word(PRECS, i)), \
         for [i = 1:np] f('vla3', word(PRECS, i)) every np::(i - 1) u 1:6 w p pt (5 + 2 * i) ps 0.55 lc rgb prec_color(word(PRECS, i)), \
         for [i = 1:np] ends(f('vla3', word(PRECS, i)), 6) u 1:($3 > 0 ? NaN : $2) w p pt PT_END ps PS lc rgb prec_color(word(PRECS, i)), \
         for [i = 1:np] ends(f('vla3', word(PRECS, i)), 6) u 1:($3 > 0 ? $2 : NaN) w p pt PT_NAN ps 1.1 lw 2 lc rgb prec_color(word(PRECS, i)), \
         for [i = 1:np] firstguard(f('vla3', word(PRECS, i))) u 1:2 w p pt 4 ps 1.3 lw 1.5 lc rgb prec_color(word(PRECS, i))
    unset label 1
    unset nonlinear y
    eval finish(c)
}
