# half.gp: the kernels' 16-bit choices on the inputs of each report (claims 9a-9h;
# docs/gated.md, "The 16-bit knobs against the reports"), from sweeps/paper.sweep's half-* tables:
# (a) decoding with S stored in 16 bits between binary32 updates (FlashKDA, sparkinfer 244,
# TensorRT-Model-Connect 725: the f16 policy too), the relative error of S_t against binary64
# without the rounding, the worst head (solid: the knob on; dotted: binary32 without it);
# (b) decoding with the decay (vmlx-swift 433) or beta (SGLang 38975) rounded to bfloat16, the same
# measure; (c) megagdn-pto 74: gdn chunk:128 on correlated keys, the read-out's error at the
# chunk ends for each triangular inverse and precision, a non-finite read-out drawn at the top
# edge (x). half-stage-* and half-ut (claims 9d, 9b) are read by paper/gen-numbers.sh only.
# Usage: gnuplot -e "dir='data'; out='figures/half'" plots/half.gp
#   reads DIR/half-*.dat (bin/vla-statenorm: t s_fro a_fro o_norm growth s_relerr o_relerr;
#   bin/vla-forms --what sweep: t C prec s_relerr a_relerr o_relerr)
if (!exists("out")) out = 'figures/half'
load system("dirname '" . ARG0 . "'") . '/style.gp'

tab(n) = dir . '/half-' . n . '.dat'
DEC = "flashkda-bf16 flashkda-off spark-gdn-bf16 spark-gdn-off spark-kda-bf16 spark-kda-off " . \
      "trtmc-f32-f16 trtmc-f16-off trtmc-f32-off vmlx-on vmlx-off sglang-on sglang-off"
TRI = "neumann forward blocked"
do for [n in DEC . " megagdn-neumann megagdn-forward megagdn-blocked"] {
    if (!have(tab(n))) {
        print sprintf('half.gp: missing %s (make figures writes it)', tab(n))
        exit status 1
    }
}
# the worst head at each checkpoint (column 4 of band: the largest)
worst(n) = band(tab(n), 6)
run_color(n) = n[1:5] eq 'flash' ? '#D55E00' : n[1:9] eq 'spark-gdn' ? '#0072B2' : \
               n[1:9] eq 'spark-kda' ? '#CC79A7' : n[1:5] eq 'trtmc' ? '#009E73' : \
               n[1:4] eq 'vmlx' ? '#E69F00' : '#56B4E9'
run_dt(n) = n[1:9] eq 'trtmc-f16' ? 2 : n[strlen(n) - 2 :] eq 'off' ? 3 : 1
# megagdn: the o error of precision p at the checkpoints, non-finite as 1e40 (the top edge)
mg(tri, p) = sprintf("< awk '!/^#/ && NF && $3 == \"%s\" { print $1, ($6 ~ /nan|inf/ ? 1e40 : $6), ($6 ~ /nan|inf/ ? 1 : 0) }' '%s'", p, tab('megagdn-' . tri))
tri_color(t) = t eq 'neumann' ? '#D55E00' : t eq 'forward' ? '#0072B2' : '#009E73'
prec_pt(p) = p eq 'f16-kern' ? 7 : p eq 'bf16-kern' ? 5 : 9

do for [cols in SIZES] {
    c = cols + 0
    eval begin(c, c == 2 ? 3.8 : 7.8)
    if (c == 2) {
        G_rows = 1; G_cols = 3; G_left = 0.07; G_right = 0.985; G_bottom = 0.11; G_top = 0.6
        G_hsp = 0.09
    } else {
        G_rows = 3; G_cols = 1; G_left = 0.19; G_right = 0.96; G_bottom = 0.06; G_top = 0.72
        G_vsp = 0.1
    }
    eval keyarea(c == 2 ? 4 : 2)
    plot NaN w l lw 2 lc rgb run_color('flashkda') t 'FlashKDA: kda, S bf16', \
         NaN w l lw 2 lc rgb run_color('spark-gdn') t 'sparkinfer: gdn, S bf16', \
         NaN w l lw 2 lc rgb run_color('spark-kda') t 'sparkinfer: kda, S bf16', \
         NaN w l lw 2 lc rgb run_color('trtmc') t 'TRT-MC: gdn, S f16 (dashed: f16 update)', \
         NaN w l lw 2 lc rgb run_color('vmlx') t 'vmlx: kda, decay bf16', \
         NaN w l lw 2 lc rgb run_color('sglang') t 'SGLang: gdn, beta bf16', \
         NaN w l lw 1.5 dt 3 lc rgb '#444444' t 'binary32 (knob off)', \
         NaN w lp pt 7 lc rgb '#444444' t 'f16-kern', NaN w lp pt 5 lc rgb '#444444' t 'bf16-kern', \
         NaN w lp pt 9 lc rgb '#444444' t 'f32', \
         for [t in TRI] NaN w l lw 2 lc rgb tri_color(t) t t, \
         NaN w l dt 3 lc rgb REF t 'u: bf16 2^{-8}, f16 2^{-11}'
    eval keydone
    set logscale xy
    set format x '10^{%T}'
    set format y '10^{%T}'
    set xlabel '{/:Italic t} (tokens)'
    set ylabel '‖{/:Italic S} - {/:Italic S}_{ref}‖ / ‖{/:Italic S}_{ref}‖'
    set yrange [1e-8 : 1]

    eval panel(1)
    set title '(a) S stored in 16 bits'
    plot for [n in "flashkda-bf16 flashkda-off spark-gdn-bf16 spark-gdn-off spark-kda-bf16 spark-kda-off trtmc-f32-f16 trtmc-f16-off trtmc-f32-off"] \
             worst(n) u 1:4 w l lw 1.5 dt run_dt(n) lc rgb run_color(n), \
         2**-8 w l dt 3 lc rgb REF, 2**-11 w l dt 3 lc rgb REF

    eval panel(2)
    if (c == 2) { unset ylabel }
    set title '(b) decay or beta rounded to bf16'
    plot for [n in "vmlx-on vmlx-off sglang-on sglang-off"] \
             worst(n) u 1:4 w l lw 1.5 dt run_dt(n) lc rgb run_color(n), \
         2**-8 w l dt 3 lc rgb REF

    eval panel(3)
    set title "(c) gdn chunk:128, corr. keys"
    set ylabel 'error of {/:Italic o} (x: non-finite)'
    set xrange [100 : 320]
    set xtics (128, 256)
    set format x '%g'
    set yrange [1e-8 : 1e45]
    plot for [t in TRI] for [p in "f16-kern bf16-kern f32"] mg(t, p) u 1:($3 > 0 ? NaN : $2) \
             w lp lw 1.5 pt prec_pt(p) lc rgb tri_color(t) notitle, \
         for [t in TRI] for [p in "f16-kern"] mg(t, p) u 1:($3 > 0 ? 1e44 : NaN) w p pt 2 ps 1.5 \
             lc rgb tri_color(t) notitle
    unset xrange; unset xtics; set xtics
    eval finish(c)
}
