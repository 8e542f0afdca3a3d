# grad.gp: the backward pass against the exact one (docs/math.md 11.3): for gdn and vla3
# (one panel each), the norm-wise relative error of each gradient (dq, dk, dv, and gdn's dbeta and
# dg, vla3's du) over all T steps against T, in bf16-kern (solid) and f32 (dashed): the median over
# the heads, the bars their range. Usage: gnuplot -e "dir='data'; out='figures/grad'" plots/grad.gp
#   reads DIR/grad-MODEL-TSTEPS.dat (bin/vla-grad: prec head grad relerr back_1e-3 back_1e-1
#   back_1 nonfinite ds_zero); writes OUT.pdf/png and OUT-1col.pdf/png
if (!exists("out")) out = 'figures/grad'
load system("dirname '" . ARG0 . "'") . '/style.gp'

do for [m in "gdn vla3"] {
    if (system(sprintf("ls '%s'/grad-%s-T*.dat 2>/dev/null | wc -l", dir, m)) + 0 == 0) {
        print sprintf('grad.gp: missing %s/grad-%s-T*.dat (make figures writes them)', dir, m)
        exit status 1
    }
}
# "T median min max" of gradient g in precision p of model m, one line per T (4 heads: the
# median is the mean of the middle two)
med(m, p, g) = sprintf("< for f in '%s'/grad-%s-T*.dat; do awk -v T=\"$(sed -n 's/^# steps: //p' \"$f\")\" '!/^#/ && NF && $1 == \"%s\" && $3 == \"%s\" { print T, $4 }' \"$f\" | sort -g -k2 | awk '{ v[NR] = $2; T = $1 } END { if (NR) print T, (NR %% 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), v[1], v[NR] }'; done | sort -g", dir, m, p, g)
GRADS(m) = m eq 'gdn' ? "dq dk dv dbeta dg" : "dq dk dv du"
gcol(g) = g eq 'dq' ? '#0072B2' : g eq 'dk' ? '#D55E00' : g eq 'dv' ? '#009E73' : \
          g eq 'dbeta' ? '#CC79A7' : g eq 'dg' ? '#E69F00' : '#000000'
gpt(g) = g eq 'dq' ? 7 : g eq 'dk' ? 5 : g eq 'dv' ? 9 : g eq 'dbeta' ? 11 : 13
UBF = 2.0 ** -8
U32 = 2.0 ** -24

do for [cols in SIZES] {
    c = cols + 0
    eval begin(c, c == 2 ? 3.0 : 5.4)
    if (c == 2) {
        G_rows = 1; G_cols = 2; G_left = 0.08; G_right = 0.99; G_bottom = 0.14; G_top = 0.76
        G_hsp = 0.08
    } else {
        G_rows = 2; G_cols = 1; G_left = 0.17; G_right = 0.96; G_bottom = 0.08; G_top = 0.8
        G_vsp = 0.11
    }
    eval keyarea(c == 2 ? 4 : 3)
    plot for [g in "dq dk dv dbeta dg du"] NaN w lp lw 2 pt gpt(g) ps 0.6 lc rgb gcol(g) t g, \
         NaN w l lw 2 lc rgb REF t 'bf16-kern (solid)', \
         NaN w l lw 1.5 dt 2 lc rgb REF t 'f32 (dashed)', \
         NaN w l lw 1 dt 3 lc rgb REF t 'u_{bf16}, u_{32}'
    eval keydone
    set logscale xy
    set format y '10^{%T}'
    set xrange [12 : 1400]
    set yrange [1e-8 : 1e-1]
    set xtics (16, 64, 256, 1024)
    set format x '%g'
    set xlabel '{/:Italic T}'
    do for [i = 1 : 2] {
        m = word("gdn vla3", i)
        eval panel(i)
        set title sprintf('(%s) %s, {/:Italic d} = 16, 4 heads: median and range', i == 1 ? 'a' : 'b', m)
        set ylabel i == 1 || c == 1 ? 'relative error of the gradient' : ''
        plot UBF w l lw 1 dt 3 lc rgb REF, U32 w l lw 1 dt 3 lc rgb REF, \
             for [g in GRADS(m)] med(m, 'bf16-kern', g) u 1:2:3:4 w yerrorlines lw 2 pt gpt(g) ps 0.6 lc rgb gcol(g), \
             for [g in GRADS(m)] med(m, 'f32', g) u 1:2:3:4 w yerrorlines lw 1.5 dt 2 pt gpt(g) ps 0.6 lc rgb gcol(g)
    }
    eval finish(c)
}
