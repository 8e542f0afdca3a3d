# half-decode.gp: decoding with the state stored in 16 bits between binary32 updates
# (docs/gated.md, "The 16-bit knobs against the reports"): the relative error of S_t against
# binary64 without the roundings, (a) every gated model with a decay, d = 64, the layers' gates,
# S in bf16 (solid), f16 (dashed), binary32 (dotted); (b) sparkinfer PR 244's claim to 10^6 steps,
# gdn and kda with decays near 1 (0.995..0.9999).
# Usage: gnuplot -e "dir='data/kernel-choices'; out='figures/half-decode'" plots/half-decode.gp
#   reads DIR/decode.dat and DIR/spark.dat (experiments/kernel_choices.py: model state t eS eo)
if (!exists("out")) out = 'figures/half-decode'
if (!exists("dir")) dir = 'data/kernel-choices'
load system("dirname '" . ARG0 . "'") . '/style.gp'

GATED = "gdn kda gla mamba2 rwkv7"
gated_color(m) = m eq 'gdn' ? '#0072B2' : m eq 'kda' ? '#D55E00' : m eq 'gla' ? '#009E73' : \
                 m eq 'mamba2' ? '#E69F00' : m eq 'rwkv7' ? '#CC79A7' : '#000000'
fdec = dir . '/decode.dat'
fspk = dir . '/spark.dat'
do for [f in fdec . ' ' . fspk] {
    if (!have(f)) {
        print sprintf('half-decode.gp: missing %s (experiments/kernel_choices.py writes it)', f)
        exit status 1
    }
}
st_dt(s) = s eq 'bf16' ? 1 : s eq 'f16' ? 2 : 3
sel(f, m, s) = sprintf("< awk '$1 == \"%s\" && $2 == \"%s\"' '%s'", m, s, f)

do for [cols in SIZES] {
    c = cols + 0
    eval begin(c, c == 2 ? 2.6 : 5.0)
    if (c == 2) {
        G_rows = 1; G_cols = 2; G_left = 0.095; G_right = 0.975; G_bottom = 0.16; G_top = 0.8
        G_hsp = 0.07
    } else {
        G_rows = 2; G_cols = 1; G_left = 0.17; G_right = 0.96; G_bottom = 0.08; G_top = 0.8
        G_vsp = 0.14
    }
    eval keyarea(c == 2 ? 8 : 4)
    plot for [m in GATED] NaN w l lw 2 lc rgb gated_color(m) t m, \
         NaN w l lw 1.5 dt 1 lc rgb '#444444' t 'S in bf16', \
         NaN w l lw 1.5 dt 2 lc rgb '#444444' t 'S in f16', \
         NaN w l lw 1.5 dt 3 lc rgb '#444444' t 'S in binary32'
    eval keydone
    set logscale xy
    set format x '10^{%T}'
    set format y '10^{%T}'
    set xlabel '{/:Italic t} (tokens decoded)'
    set ylabel '‖{/:Italic S} - {/:Italic S}_{ref}‖ / ‖{/:Italic S}_{ref}‖'
    set yrange [1e-8 : 1]

    eval panel(1)
    set title "(a) every gated model, the layers' gates, {/:Italic d} = 64"
    plot for [m in GATED] for [s in "bf16 f16 f32"] sel(fdec, m, s) u 3:4 w l lw 1.5 \
             dt st_dt(s) lc rgb gated_color(m), \
         2**-8 w l dt 3 lc rgb REF, 2**-11 w l dt 3 lc rgb REF

    eval panel(2)
    if (c == 2) { unset ylabel }
    set title "(b) sparkinfer 244: decays near 1, {/:Italic d} = 64"
    plot for [m in "gdn kda"] for [s in "bf16 f32"] sel(fspk, m, s) u 3:4 w l lw 1.5 \
             dt st_dt(s) lc rgb gated_color(m), \
         2**-8 w l dt 3 lc rgb REF
    eval finish(c)
}
