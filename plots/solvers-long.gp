# solvers-long.gp (make figures-long): keep M and solve against tracking A to 10^6 steps,
# each head on its own, since a head can fail where the other does not: (a), (c) x_err, the
# relative error of the vector vla3 uses, against t, one curve per way and head, solid without
# forgetting, dashed with gamma = 0.999; (b), (d) the smallest eigenvalue of the M the solvers keep,
# as stored (the same M for solve, cg and cheb: their updates of M are one code), per head, with
# lambda0 (the exact M's lower bound) and 0 marked. (a), (b) binary32; (c), (d) binary16 storage with
# binary32 arithmetic; (e), (f) bfloat16 storage with binary32 arithmetic. vla3 on lmlike, d = 16, nudge off, reference lib in binary64. A cross marks
# where a run turned NaN. The horizons and the ranges come from the tables.
# Usage: gnuplot -e "dir='data'; out='figures/solvers-long'" plots/solvers-long.gp
#   reads DIR/solvers-long-lmlike-gGAMMA-PREC-WAY.dat (bin/vla-drift: column 15 x_err, 16 m_lmin);
#   writes OUT.pdf/png, OUT-1col.*
if (!exists("out")) out = 'figures/solvers-long'
load system("dirname '" . ARG0 . "'") . '/style.gp'

WAYS = 'sm solve cg8 cheb8'
way_name(w) = w eq 'cg8' ? 'cg:8' : w eq 'cheb8' ? 'cheb:8' : w
way_color(w) = w eq 'solve' ? '#000000' : w eq 'cg8' ? '#D55E00' : w eq 'cheb8' ? '#009E73' : track_color(w)
GAMMAS = 'g1 g0.999'
PANELP = 'f32 f16-f32 bf16-f32'
f(g, p, w) = sprintf('%s/solvers-long-lmlike-%s-%s-%s.dat', dir, g, p, w)
do for [p in PANELP] {
    do for [g in GAMMAS] {
        do for [w in WAYS] {
            if (!have(f(g, p, w))) { print 'solvers-long.gp: missing ' . f(g, p, w); exit status 1 }
        }
    }
}
X = 15
LM = 16
LAMBDA0 = real(system(sprintf("sed -n 's/^# config: .*lambda0=\\([^ ]*\\).*/\\1/p' '%s'", f('g1', 'f32', 'solve'))))

do for [cols in SIZES] {
    c = cols + 0
    eval begin(c, c == 2 ? 6.6 : 10.6)
    if (c == 2) {
        G_rows = 3; G_cols = 2; G_left = 0.08; G_right = 0.98; G_bottom = 0.065; G_top = 0.9
        G_hsp = 0.09; G_vsp = 0.095
    } else {
        G_rows = 6; G_cols = 1; G_left = 0.17; G_right = 0.96; G_bottom = 0.04; G_top = 0.915
        G_hsp = 0.1; G_vsp = 0.05
    }
    eval keyarea(c == 2 ? 7 : 3)
    plot for [w in WAYS] NaN w l lw 2 lc rgb way_color(w) t way_name(w), \
         NaN w l lw 1.5 dt 1 lc rgb '#444444' t 'γ = 1', \
         NaN w l lw 1.5 dt 2 lc rgb '#444444' t 'γ = 0.999', \
         NaN w p pt PT_NAN ps 1.1 lw 2 lc rgb '#444444' t 'NaN'
    eval keydone
    do for [i = 1:6] {
        P = word(PANELP, int((i + 1) / 2))
        eval panel(i)
        set xrange [10 : tmax(f('g1', P, 'solve')) * 2]
        set logscale x
        set format x '10^{%T}'
        set mxtics 10
        set xlabel (c == 2 ? i > 4 : i == 6) ? '{/:Italic t} (tokens)' : ''
        if (i % 2 == 1) {
            set title sprintf('(%s) %s: x\_err of each head', word('a b c d e f', i), P)
            set logscale y
            set format y '10^{%T}'
            set autoscale y
            YT = c == 2 ? 10 : 100
            set ytics YT
            set ylabel 'x\_err'
            plot for [g = 1:2] for [w in WAYS] for [h = 0:1] f(word(GAMMAS, g), P, w) index h u 1:(column(X) > 0 ? column(X) : NaN) w l lw (g == 1 ? 1.6 : 1.2) dt g lc rgb way_color(w), \
                 for [g = 1:2] for [w in WAYS] ends(f(word(GAMMAS, g), P, w), X) u 1:($3 > 0 ? $2 : NaN) w p pt PT_NAN ps 1.1 lw 2 lc rgb way_color(w)
        } else {
            set title sprintf('(%s) %s: λ_{min} of the stored M, each head', word('a b c d e f', i), P)
            unset logscale y
            set format y '%g'
            set autoscale y
            set ytics autofreq
            set ylabel 'λ_{min}(M)'
            plot for [g = 1:2] for [h = 0:1] f(word(GAMMAS, g), P, 'solve') index h u 1:LM w l lw (g == 1 ? 1.6 : 1.2) dt g lc rgb '#000000', \
                 LAMBDA0 w l lw 1 dt 3 lc rgb REF, 0 w l lw 1 lc rgb REF
        }
        unset logscale xy
    }
    eval finish(c)
}
