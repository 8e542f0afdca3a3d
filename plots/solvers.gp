# solvers.gp: keep M and solve, against tracking A (docs/math.md 4.7-4.10): the relative
# error of the vector vla3 uses, x_err = ||alpha_t - alpha_t^ref|| / ||alpha_t^ref|| with alpha =
# unit(A k') (the ways that keep M solve M y = k'), against t, the mean of 2 heads; one curve per
# way, solid without forgetting, dashed with gamma = 0.999. (a)-(e) lmlike in five precisions
# ((a) also binary64 against the exact MPFR reference to 10^4, dotted), (f)-(h) bfloat16 on gauss,
# subspace:4,0.001 and the real trace. vla3, d = 16 (the trace: 32), nudge off, reference lib in
# binary64. A cross marks where a run turned NaN. The horizons and the ranges come from the tables.
# Usage: gnuplot -e "dir='data'; out='figures/solvers'" plots/solvers.gp
#   reads DIR/solvers-STREAM-gGAMMA-PREC-WAY.dat (bin/vla-drift: column 15 is x_err);
#   writes OUT.pdf/png, OUT-1col.*
if (!exists("out")) out = 'figures/solvers'
load system("dirname '" . ARG0 . "'") . '/style.gp'

WAYS = 'sm sr solve cg8 cheb8'                  # file-name tokens
way_name(w) = w eq 'cg8' ? 'cg:8' : w eq 'cheb8' ? 'cheb:8' : w
way_color(w) = w eq 'solve' ? '#000000' : w eq 'cg8' ? '#D55E00' : w eq 'cheb8' ? '#009E73' : track_color(w)
GAMMAS = 'g1 g0.999'
f(s, g, p, w) = sprintf('%s/solvers-%s-%s-%s-%s.dat', dir, s, g, p, w)
# the panels: stream and precision
PSTREAM = 'lmlike lmlike lmlike lmlike lmlike gauss subspace trace'
PPREC = 'f32 f16 bf16 f16-f32 bf16-f32 bf16 bf16 bf16'
has(s, p, w) = have(f(s, 'g1', p, w))
src(s, g, p, w) = has(s, p, w) ? f(s, g, p, w) : '/dev/null'
do for [i = 1:8] {
    if (!have(f(word(PSTREAM, i), 'g1', word(PPREC, i), 'solve'))) { print 'solvers.gp: missing ' . f(word(PSTREAM, i), 'g1', word(PPREC, i), 'solve'); exit status 1 }
}
X = 15

do for [cols in SIZES] {
    c = cols + 0
    eval begin(c, c == 2 ? 4.4 : 7.6)
    if (c == 2) {
        G_rows = 2; G_cols = 4; G_left = 0.075; G_right = 0.99; G_bottom = 0.1; G_top = 0.82
        G_hsp = 0.045; G_vsp = 0.13
    } else {
        G_rows = 4; G_cols = 2; G_left = 0.19; G_right = 0.96; G_bottom = 0.055; G_top = 0.885
        G_hsp = 0.12; G_vsp = 0.085
    }
    eval keyarea(c == 2 ? 8 : 4)
    plot for [w in WAYS] NaN w l lw 2 lc rgb way_color(w) t way_name(w), \
         NaN w l lw 1.5 dt 1 lc rgb '#444444' t 'γ = 1', \
         NaN w l lw 1.5 dt 2 lc rgb '#444444' t 'γ = 0.999', \
         NaN w l lw 1.2 dt 3 lc rgb '#444444' t '(a): f64 against MPFR', \
         NaN w p pt PT_NAN ps 1.1 lw 2 lc rgb '#444444' t 'NaN'
    eval keydone
    set logscale xy
    set format x '10^{%T}'
    set format y '10^{%T}'
    set autoscale y
    set ytics auto
    do for [i = 1:8] {
        S = word(PSTREAM, i); P = word(PPREC, i)
        eval panel(i)
        g1 = f(S, 'g1', P, 'solve')
        set xrange [1 : tmax(g1) * 2]
        set xtics auto
        set mxtics 10
        set title sprintf('(%s) %s, %s', word('a b c d e f g h', i), P, S)
        set xlabel ((c == 2 && i > 4) || (c == 1 && i > 6)) ? '{/:Italic t} (tokens)' : ''
        set ylabel ((c == 2 && (i == 1 || i == 5)) || (c == 1 && i % 2 == 1)) ? 'x\_err' : ''
        plot for [g = 1:2] for [w in WAYS] band(src(S, word(GAMMAS, g), P, w), X) u 1:2 w l lw (g == 1 ? 2 : 1.5) dt g lc rgb way_color(w), \
             for [g = 1:2] for [w in WAYS] ends(src(S, word(GAMMAS, g), P, w), X) u 1:($3 > 0 ? $2 : NaN) w p pt PT_NAN ps 1.1 lw 2 lc rgb way_color(w), \
             for [w in WAYS] band(i == 1 ? src(S, 'g1', 'f64', w) : '/dev/null', X) u 1:2 w l lw 1.2 dt 3 lc rgb way_color(w)
    }
    eval finish(c)
}
