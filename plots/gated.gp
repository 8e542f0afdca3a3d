# gated.gp: the gated family (gdn, kda, gla, mamba2, rwkv7; docs/gated.md) on the synthetic lmlike
# stream with the stream's gates: (a) ||S_t||_F in binary32, (b) the relative error of S_t in bf16
# (solid) and f16 (dashed) against binary64 of the same rounded inputs, (c) gdn's forms in
# binary32 and the kernels' 16-bit policies against the exact sequential recurrence, the error of
# the read-out at the checkpoints (chunk:64 solid, sequential dashed, scan dotted), (d) ||J_t||_2
# in binary64, the median (solid) and the largest (dashed) of each window between checkpoints,
# (e, f) every model's chunk:C in bf16-kern (solid) and f16-kern (dashed) against the exact
# sequential recurrence: the error of o (the mean over the checkpoints) and of S at the last.
# Lines: the mean over the heads; bands: their range (a, b). Titles come from the tables' headers.
# Usage: gnuplot -e "dir='data'; out='figures/gated'" plots/gated.gp
#   reads DIR/gated-MODEL-PREC.dat (bin/vla-statenorm), DIR/gated-jac-MODEL.dat (bin/vla-jacobian)
#   and DIR/gated-forms-MODEL.dat (bin/vla-forms --what sweep: t C prec s_relerr a_relerr
#   o_relerr); writes OUT.pdf/png and OUT-1col.pdf/png
if (!exists("out")) out = 'figures/gated'
load system("dirname '" . ARG0 . "'") . '/style.gp'

GATED = "gdn kda gla mamba2 rwkv7"
gated_color(m) = m eq 'gdn' ? '#0072B2' : m eq 'kda' ? '#D55E00' : m eq 'gla' ? '#009E73' : \
                 m eq 'mamba2' ? '#E69F00' : m eq 'rwkv7' ? '#CC79A7' : '#000000'
tab(m, p) = dir . '/gated-' . m . '-' . p . '.dat'
fgdn = dir . '/gated-forms-gdn.dat'
do for [m in GATED] {
    do for [p in "f32 bf16 f16"] {
        if (!have(tab(m, p))) {
            print sprintf('gated.gp: missing %s (make figures writes it)', tab(m, p))
            exit status 1
        }
    }
}
jtab(m) = dir . '/gated-jac-' . m . '.dat'
ftab(m) = dir . '/gated-forms-' . m . '.dat'
do for [m in GATED] {
    do for [f in jtab(m) . ' ' . ftab(m)] {
        if (!have(f)) {
            print sprintf('gated.gp: missing %s (make figures writes it)', f)
            exit status 1
        }
    }
}
# the chunk forms (C > 0) of precision p in table f: C and the mean of column c over the
# checkpoints (mean), or its value at the last checkpoint (last)
byC(f, p, c, how) = sprintf("< awk '!/^#/ && NF && $3 == \"%s\" && $2 > 0 { v = $%d + 0; s[$2] += v; n[$2]++; if ($1 + 0 >= tl[$2]) { tl[$2] = $1 + 0; l[$2] = v } } END { for (k in s) print k, (\"%s\" == \"mean\" ? s[k] / n[k] : l[k]) }' '%s' | sort -g", p, c, how, f)
T = tmax(tab('gdn', 'f32'))
KPRECS = "f32 f16-kern bf16-kern"
kcol(p) = p eq 'f32' ? '#000000' : p eq 'f16-kern' ? '#56B4E9' : '#999999'

do for [cols in SIZES] {
    c = cols + 0
    eval begin(c, c == 2 ? 5.0 : 13.0)
    if (c == 2) {
        G_rows = 2; G_cols = 3; G_left = 0.06; G_right = 0.99; G_bottom = 0.08; G_top = 0.88
        G_hsp = 0.065; G_vsp = 0.13
    } else {
        G_rows = 6; G_cols = 1; G_left = 0.17; G_right = 0.96; G_bottom = 0.035; G_top = 0.955
        G_vsp = 0.06
    }
    eval keyarea(c == 2 ? 8 : 4)
    plot for [m in GATED] NaN w l lw 2 lc rgb gated_color(m) t m, \
         NaN w l lw 1.5 dt 1 lc rgb '#444444' t 'bf16', \
         NaN w l lw 1.5 dt 2 lc rgb '#444444' t 'f16'
    eval keydone
    set logscale xy
    set format x '10^{%T}'
    set format y '10^{%T}'
    set xlabel '{/:Italic t} (tokens)'

    eval panel(1)
    set title sprintf('(a) ‖{/:Italic S_t}‖_F in binary32, %s, {/:Italic d} = %s', \
                      header(tab('gdn', 'f32'), 'stream'), config(tab('gdn', 'f32'), 'd'))
    set ylabel '‖{/:Italic S_t}‖_F'
    set xrange [1 : T * 1.5]
    set autoscale y
    plot for [m in GATED] band(tab(m, 'f32'), 2) u 1:3:4 w filledcurves fs transparent solid 0.2 noborder lc rgb gated_color(m), \
         for [m in GATED] band(tab(m, 'f32'), 2) u 1:2 w l lw 2 lc rgb gated_color(m)

    eval panel(2)
    set title '(b) error of {/:Italic S_t} against binary64'
    set ylabel '‖{/:Italic S} - {/:Italic S}_{ref}‖ / ‖{/:Italic S}_{ref}‖'
    set yrange [1e-5 : 1]
    plot for [m in GATED] band(tab(m, 'bf16'), 6) u 1:2 w l lw 2 lc rgb gated_color(m), \
         for [m in GATED] band(tab(m, 'f16'), 6) u 1:2 w l lw 1.5 dt 2 lc rgb gated_color(m), \
         2**-8 w l dt 3 lc rgb REF, 2**-11 w l dt 3 lc rgb REF
    set autoscale y

    eval panel(3)
    set title "(c) gdn's forms: error of {/:Italic o}"
    set ylabel '‖{/:Italic o} - {/:Italic o}_{ref}‖ / ‖{/:Italic o}_{ref}‖'
    set yrange [1e-8 : 10]
    set xrange [100 : 6e3] # the forms' tables run from t = 128 to 4096
    set key inside top left vertical maxrows 3 Left reverse font ',6' samplen 1.5 spacing 0.9 width -4 opaque box
    plot for [p in KPRECS] fgdn u ($2 == 64 && strcol(3) eq p ? $1 : 1/0):6 w l lw 2 lc rgb kcol(p) t p.' chunk:64', \
         for [p in KPRECS] fgdn u ($2 == 0 && strcol(3) eq p ? $1 : 1/0):6 w l lw 1.5 dt 2 lc rgb kcol(p) notitle, \
         for [p in KPRECS] fgdn u ($2 == -1 && strcol(3) eq p ? $1 : 1/0):6 w l lw 1.5 dt 3 lc rgb kcol(p) notitle, \
         NaN w l lw 1.5 dt 2 lc rgb 'black' t 'seq', NaN w l lw 1.5 dt 3 lc rgb 'black' t 'scan'
    set autoscale y
    set xrange [1 : T * 1.5]
    unset key

    eval panel(4)
    set title "(d) ‖{/:Italic J_t}‖_2: windows' median, max (dashed)"
    set ylabel '‖{/:Italic J_t}‖_2 (binary64)'
    unset logscale y
    set format y '%g'
    set yrange [0.6 : 1.1]
    plot for [m in GATED] band(jtab(m), 3) u 1:2 w l lw 2 lc rgb gated_color(m), \
         for [m in GATED] band(jtab(m), 2) u 1:2 w l lw 1.5 dt 2 lc rgb gated_color(m), \
         1 w l dt 3 lc rgb REF
    set autoscale y
    set logscale y
    set format y '10^{%T}'

    eval panel(5)
    set title '(e) chunk:{/:Italic C}: error of {/:Italic o}, mean over {/:Italic t}'
    set xlabel '{/:Italic C}'
    set logscale x 2
    set format x '%g'
    set xrange [12 : 170]
    set ylabel '‖{/:Italic o} - {/:Italic o}_{ref}‖ / ‖{/:Italic o}_{ref}‖'
    set yrange [1e-5 : 1e-1]
    plot for [m in GATED] byC(ftab(m), 'bf16-kern', 6, 'mean') u 1:2 w lp lw 2 pt 7 ps 0.4 lc rgb gated_color(m), \
         for [m in GATED] byC(ftab(m), 'f16-kern', 6, 'mean') u 1:2 w lp lw 1.5 dt 2 pt 7 ps 0.4 lc rgb gated_color(m), \
         2**-8 w l dt 3 lc rgb REF, 2**-11 w l dt 3 lc rgb REF

    eval panel(6)
    set title sprintf('(f) chunk:{/:Italic C}: error of {/:Italic S}, {/:Italic t} = %d', \
                      int(tmax(ftab('gdn'))))
    set ylabel '‖{/:Italic S} - {/:Italic S}_{ref}‖ / ‖{/:Italic S}_{ref}‖'
    plot for [m in GATED] byC(ftab(m), 'bf16-kern', 4, 'last') u 1:2 w lp lw 2 pt 7 ps 0.4 lc rgb gated_color(m), \
         for [m in GATED] byC(ftab(m), 'f16-kern', 4, 'last') u 1:2 w lp lw 1.5 dt 2 pt 7 ps 0.4 lc rgb gated_color(m), \
         2**-8 w l dt 3 lc rgb REF, 2**-11 w l dt 3 lc rgb REF
    set autoscale xy
    eval finish(c)
}
