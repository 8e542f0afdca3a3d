# newmodels.gp: deltaproduct, loglinear and mamba3 (docs/gated.md) on the synthetic lmlike stream
# with the stream's gates, after the gated family's figure (gated.gp): one panel per model, the
# relative error of the read-out o_t (solid, the band its range over the heads) and of the state
# S_t (dashed) against binary64 of the same rounded inputs, in binary32, bf16 and f16; the dotted
# lines are the unit roundoffs 2^-8, 2^-11 and 2^-24. loglinear's S is the sum of its levels;
# deltaproduct's t counts sub-steps (householder of them a token). Titles come from the tables.
# Usage: gnuplot -e "dir='data'; out='figures/newmodels'" plots/newmodels.gp
#   reads DIR/newmodels-MODEL-PREC.dat (bin/vla-statenorm --ref f64); writes OUT.pdf/png and
#   OUT-1col.pdf/png
if (!exists("out")) out = 'figures/newmodels'
load system("dirname '" . ARG0 . "'") . '/style.gp'

NEW = "deltaproduct loglinear mamba3"
PRECS = "f32 bf16 f16"
pcol(p) = p eq 'f32' ? '#000000' : p eq 'bf16' ? '#D55E00' : '#0072B2'
tab(m, p) = dir . '/newmodels-' . m . '-' . p . '.dat'
do for [m in NEW] {
    do for [p in PRECS] {
        if (!have(tab(m, p))) {
            print sprintf('newmodels.gp: missing %s (make figures writes it)', tab(m, p))
            exit status 1
        }
    }
}
T = tmax(tab('mamba3', 'f32'))

do for [cols in SIZES] {
    c = cols + 0
    eval begin(c, c == 2 ? 2.9 : 7.6)
    if (c == 2) {
        G_rows = 1; G_cols = 3; G_left = 0.07; G_right = 0.99; G_bottom = 0.15; G_top = 0.80
        G_hsp = 0.06; G_vsp = 0.1
    } else {
        G_rows = 3; G_cols = 1; G_left = 0.17; G_right = 0.96; G_bottom = 0.055; G_top = 0.915
        G_vsp = 0.125
    }
    eval keyarea(c == 2 ? 5 : 3)
    plot for [p in PRECS] NaN w l lw 2 lc rgb pcol(p) t p.' o', \
         NaN w l lw 1.5 dt 2 lc rgb '#444444' t 'S (dashed)'
    eval keydone
    set logscale xy
    set format x '10^{%T}'
    set format y '10^{%T}'
    set xlabel '{/:Italic t} (steps)'
    set xrange [1 : T * 1.5]
    set yrange [1e-9 : 1]
    i = 0
    do for [m in NEW] {
        i = i + 1
        eval panel(i)
        if (i == 1 || c == 1) { set ylabel 'relative error against binary64' } else { unset ylabel }
        set title sprintf('(%s) %s, {/:Italic d} = %s, %s', i == 1 ? 'a' : i == 2 ? 'b' : 'c', \
                          m eq 'deltaproduct' ? m . ' (householder ' . config(tab(m, 'f32'), 'householder') . ')' : m, \
                          config(tab(m, 'f32'), 'd'), header(tab(m, 'f32'), 'stream'))
        plot for [p in PRECS] band(tab(m, p), 7) u 1:3:4 w filledcurves fs transparent solid 0.15 noborder lc rgb pcol(p), \
             for [p in PRECS] band(tab(m, p), 7) u 1:2 w l lw 2 lc rgb pcol(p), \
             for [p in PRECS] band(tab(m, p), 6) u 1:2 w l lw 1.5 dt 2 lc rgb pcol(p), \
             2**-8 w l dt 3 lc rgb REF, 2**-11 w l dt 3 lc rgb REF, 2**-24 w l dt 3 lc rgb REF
    }
    eval finish(c)
}
