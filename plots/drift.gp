# drift.gp: the relative drift ||A_t - A_t^ref||_F / ||A_t^ref||_F of the tracked inverse against t
# (bin/vla-drift): (a)-(e) vla3 on lmlike in each precision with the periodic nudge on and off, beside
# the storage format's unit roundoff; (f) rls on an ill-conditioned subspace stream against the
# exact MPFR reference. Marks: the end of each curve, the first checkpoint where lambda_min(A_t) < 0,
# and the first where A_t is NaN (drawn at the curve's last finite value). The titles (model,
# stream, d) and the ranges come from the tables.
# Usage: gnuplot -e "dir='data'; out='figures/drift'" plots/drift.gp
#   reads DIR/drift-vla3-PREC-nudge{on,off}.dat, DIR/drift-rls-{f64,f32}-l{1,1e-6}.dat;
#   writes OUT.pdf/png and OUT-1col.pdf/png
if (!exists("out")) out = 'figures/drift'
load system("dirname '" . ARG0 . "'") . '/style.gp'

vla3(p, n) = sprintf('%s/drift-vla3-%s-nudge%s.dat', dir, p, n)
rls(p, l) = sprintf('%s/drift-rls-%s-l%s.dat', dir, p, l)
do for [p in PRECS] {
    do for [n in 'on off'] {
        if (!have(vla3(p, n))) { print 'drift.gp: missing ' . vla3(p, n); exit status 1 }
    }
}
# the storage format's unit roundoff: what one rounding of A already costs
ustore(p) = (p eq 'f32') ? 2**-24 : (p[1:3] eq 'f16') ? 2**-11 : 2**-8
c_off = '#0072B2'
c_on = '#D55E00'
rlsc(i) = word('#000000 #0072B2 #009E73 #D55E00', i)
rlsf(i) = rls(word('f64 f32 f64 f32', i), word('1 1 1e-6 1e-6', i))
rlst(i) = sprintf('%s, λ_0 = %s', word('f64 f32 f64 f32', i), config(rlsf(i), 'lambda0'))
T = tmax(vla3('f32', 'on'))
Tr = tmax(rlsf(1))
m3 = config(vla3('f32', 'on'), 'model')

do for [cols in SIZES] {
    c = cols + 0
    eval begin(c, c == 2 ? 4.6 : 6.9)
    if (c == 2) {
        G_rows = 2; G_cols = 3; G_left = 0.085; G_right = 0.99; G_bottom = 0.1; G_top = 0.87
        G_hsp = 0.06; G_vsp = 0.125
    } else {
        G_rows = 3; G_cols = 2; G_left = 0.2; G_right = 0.95; G_bottom = 0.065; G_top = 0.85
        G_hsp = 0.17; G_vsp = 0.085
    }
    eval keyarea(c == 2 ? 6 : 3)
    plot NaN w l lw 2 lc rgb c_off t 'nudge off', \
         NaN w l lw 2 lc rgb c_on t 'nudge on', \
         NaN w l dt 2 lw 1.2 lc rgb REF t 'unit roundoff {/:Italic u}', \
         NaN w p pt PT_END ps PS lc rgb '#444444' t 'end', \
         NaN w p pt PT_NEG ps 1.0 lw 1.5 lc rgb '#444444' t 'λ_{min} < 0', \
         NaN w p pt PT_NAN ps 1.1 lw 2 lc rgb '#444444' t 'NaN'
    eval keydone
    set logscale xy
    set format x '10^{%T}'
    set format y '10^{%T}'
    set xrange [1 : T * 1.5]
    set autoscale y
    set ytics auto
    set xtics auto
    set mxtics 10
    i = 0
    do for [p in PRECS] {
        i = i + 1
        eval panel(i)
        set title sprintf('(%s) %s, %s', word('a b c d e', i), m3, p)
        set xlabel (c == 2 && i <= 3) || (c == 1 && i <= 4) ? '' : '{/:Italic t} (tokens)'
        set ylabel (c == 2 && (i == 1 || i == 4)) || (c == 1 && i % 2 == 1) ? 'relative drift of {/:Italic A_t}' : ''
        off = vla3(p, 'off'); on = vla3(p, 'on')
        plot off u 1:2 w l lw 2 lc rgb c_off, \
             on u 1:2 w l lw 2 lc rgb c_on, \
             ustore(p) w l dt 2 lw 1.2 lc rgb REF, \
             ends(off, 2) u 1:($3 > 0 ? NaN : $2) w p pt PT_END ps PS lc rgb c_off, \
             ends(on, 2) u 1:($3 > 0 ? NaN : $2) w p pt PT_END ps PS lc rgb c_on, \
             for [g in 'off on'] ends(vla3(p, g), 2) u 1:($3 > 0 ? $2 : NaN) w p pt PT_NAN ps 1.1 lw 2 lc rgb (g eq 'on' ? c_on : c_off), \
             for [g in 'off on'] nanends(vla3(p, g), 2) u 1:2:('NaN') w labels offset 0, 0.9 font ',7' tc rgb (g eq 'on' ? c_on : c_off), \
             for [g in 'off on'] firstneg(vla3(p, g), 6, 2) u 1:2 w p pt PT_NEG ps 1.3 lw 1.5 lc rgb (g eq 'on' ? c_on : c_off)
    }
    eval panel(6)
    set title sprintf('(f) %s, %s%s', config(rlsf(1), 'model'), stream_name(rlsf(1)), c == 2 ? ' stream' : '')
    set xlabel '{/:Italic t} (tokens)'
    set ylabel ''
    set xrange [1 : Tr * 1.5]
    set autoscale y
    set ytics auto
    eval keystyle
    set key inside top center horizontal Left reverse maxrows 2 samplen 1.2
    set offsets 0, 0, graph 0.8, 0  # room above the curves for the key
    plot for [j = 1:4] rlsf(j) u 1:2 w l lw 2 lc rgb rlsc(j) t rlst(j), \
         for [j = 1:4] ends(rlsf(j), 2) u 1:($3 > 0 ? NaN : $2) w p pt PT_END ps PS lc rgb rlsc(j), \
         for [j = 1:4] firstneg(rlsf(j), 6, 2) u 1:2 w p pt PT_NEG ps 1.0 lw 1.5 lc rgb rlsc(j)
    eval keystyle
    set offsets 0, 0, 0, 0
    eval finish(c)
}
