# cache.gp: decoding's state cache (docs/forms.md, "The state cache"): gdn, d = 64, every decay
# 0.999, 10^5 tokens, binary32 updates, S kept between steps in each cache; (a) the relative error
# of S_t, (b) of the read-out o_t, against binary64 without a cache, the worst of the two heads at
# each checkpoint. Solid: round to nearest; dashed: stochastic; dotted: error feedback.
# Usage: gnuplot -e "dir='data'; out='figures/cache'" plots/cache.gp
#   (with long defined, cache-long.gp: the cachelong-* tables of make figures-long, 10^6 tokens)
#   reads DIR/cache-*.dat and DIR/half-spark-gdn-{off,bf16}.dat (bin/vla-statenorm: t s_fro a_fro
#   o_norm growth s_relerr o_relerr)
if (!exists("out")) out = exists("long") ? 'figures/cache-long' : 'figures/cache'
load system("dirname '" . ARG0 . "'") . '/style.gp'

RUNS = "f32 bf16 f16 e5m2-row-rn e4m3-row-rn e4m3-row-sr int8-row-rn int8-row-sr int8-row-ef " . \
       "int16-row-rn"
tab(n) = exists("long") ? dir . '/cachelong-' . n . '.dat' : \
         n eq 'f32' ? dir . '/half-spark-gdn-off.dat' : n eq 'bf16' ? dir . '/half-spark-gdn-bf16.dat' : \
         dir . '/cache-' . n . '.dat'
do for [n in RUNS] {
    if (!have(tab(n))) {
        print sprintf('cache.gp: missing %s (make figures%s writes it)', tab(n), exists("long") ? '-long' : '')
        exit status 1
    }
}
fmt(n) = strstrt(n, '-') ? n[1:strstrt(n, '-') - 1] : n
rnd(n) = strstrt(n, '-') ? n[strlen(n) - 1:] : 'rn'
fmt_color(f) = f eq 'f32' ? '#000000' : f eq 'bf16' ? '#D55E00' : f eq 'f16' ? '#E69F00' : \
               f eq 'e5m2' ? '#CC79A7' : f eq 'e4m3' ? '#009E73' : f eq 'int8' ? '#0072B2' : '#56B4E9'
rnd_dt(r) = r eq 'sr' ? 2 : r eq 'ef' ? 3 : 1
label(n) = n eq 'f32' ? 'binary32, no cache' : n eq 'bf16' ? 'bf16' : n eq 'f16' ? 'f16' : \
           fmt(n) . ', scale per row'
# the worst head at each checkpoint: band's largest (column 4)
do for [cols in SIZES] {
    c = cols + 0
    eval begin(c, c == 2 ? 2.9 : 5.4)
    if (c == 2) {
        G_rows = 1; G_cols = 2; G_left = 0.085; G_right = 0.98; G_bottom = 0.15; G_top = 0.74
        G_hsp = 0.08
    } else {
        G_rows = 2; G_cols = 1; G_left = 0.18; G_right = 0.96; G_bottom = 0.08; G_top = 0.74
        G_vsp = 0.13
    }
    eval keyarea(c == 2 ? 5 : 3)
    plot for [n in "f32 bf16 f16 e5m2-row-rn e4m3-row-rn int8-row-rn int16-row-rn"] NaN w l lw 2 \
             lc rgb fmt_color(fmt(n)) t label(n), \
         NaN w l lw 1.5 dt 1 lc rgb '#444444' t 'to nearest', \
         NaN w l lw 1.5 dt 2 lc rgb '#444444' t 'stochastic', \
         NaN w l lw 1.5 dt 3 lc rgb '#444444' t 'error feedback'
    eval keydone
    set logscale xy
    set format x '10^{%T}'
    set format y '10^{%T}'
    set xlabel '{/:Italic t} (tokens decoded)'
    set yrange [1e-8 : 10]
    do for [p = 1 : 2] {
        eval panel(p)
        col = p == 1 ? 6 : 7
        if (p == 1) {
            set title '(a) the state'
            set ylabel '‖{/:Italic S} - {/:Italic S}_{ref}‖ / ‖{/:Italic S}_{ref}‖'
        } else {
            set title '(b) the read-out'
            set ylabel '‖{/:Italic o} - {/:Italic o}_{ref}‖ / ‖{/:Italic o}_{ref}‖'
            if (c == 2) { unset ylabel }
        }
        plot for [n in RUNS] band(tab(n), col) u 1:4 w l lw 1.5 dt rnd_dt(rnd(n)) \
                 lc rgb fmt_color(fmt(n)) notitle
    }
    eval finish(c)
}
