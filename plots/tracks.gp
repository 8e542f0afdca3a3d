# tracks.gp: which way of tracking A holds up in which precision: (a)-(e) the relative drift of
# vla3's A_t (lmlike, d = 32, nudge off, reference lib in binary64) against t, one panel per
# precision, one curve per way; (f) the cost of each way (ns per step on one core, bin/vla-scaling)
# against its drift at t = 10^4, or the tables' horizon if shorter (shape: the precision; colour: the way). sm-sym and joseph follow
# sm's curve to the plotted digits: they are drawn as marks on it, on alternate checkpoints, so that
# all three stay visible. The horizon, the ranges of (a)-(e) and their model come from the tables.
# Usage: gnuplot -e "dir='data'; out='figures/tracks'" plots/tracks.gp
#   reads DIR/tracks-vla3-PREC-TRACK.dat (bin/vla-drift) and DIR/tracks-cost-TRACK.dat
#   (bin/vla-scaling: columns model prec track d T ns_per_step ...); writes OUT.pdf/png, OUT-1col.*
if (!exists("out")) out = 'figures/tracks'
load system("dirname '" . ARG0 . "'") . '/style.gp'

f(p, t) = sprintf('%s/tracks-vla3-%s-%s.dat', dir, p, t)
cost(t) = sprintf('%s/tracks-cost-%s.dat', dir, t)
# the ways each precision has: comp in the uniform formats, sr with 16-bit storage and f32 arithmetic
has(p, t) = (t eq 'comp') ? (p eq 'f32' || p eq 'f16' || p eq 'bf16') : \
            (t eq 'sr') ? (p eq 'f16-f32' || p eq 'bf16-f32') : 1
do for [p in PRECS] {
    do for [t in TRACKS] {
        if (has(p, t) && !have(f(p, t))) { print 'tracks.gp: missing ' . f(p, t); exit status 1 }
    }
}
LINES = 'sm chol comp sr'      # drawn as lines
MARKS = 'sm-sym joseph'        # drawn as marks on sm's line
mark_pt(t) = t eq 'sm-sym' ? 1 : 6
src(p, t) = has(p, t) ? f(p, t) : '/dev/null'
# the drift at t = TD (10^4, or the tables' horizon when it is shorter: a checkpoint either way)
# of a (precision, way), and the cost panel's rows: "ns drift" per precision, at the tables' d
PSHAPE = '7 5 9 11 13'         # f32 f16 bf16 f16-f32 bf16-f32
TD = tmax(f('f32', 'sm')) < 10000 ? tmax(f('f32', 'sm')) : 10000
TDs = TD == 10000 ? '10^4' : sprintf('%.0f', TD)
DD = config(f('f32', 'sm'), 'd')
costrows(t, p) = sprintf("< awk -v P=%s -v D='%s' -v T=%.0f -v DD=%s 'BEGIN { while ((getline l < D) > 0) { split(l, w); if (l !~ /^#/ && w[1] == T) d = w[2] } } !/^#/ && NF && $1 == \"vla3\" && $2 == P && $4 == DD { print $6, d }' '%s'", p, src(p, t), TD, DD, cost(t))

# the ways whose drift is not finite at TD: named in panel (f), which has no place for them
drift4(file) = system(sprintf("awk '!/^#/ && NF && $1 == %.0f { print $2; exit }' '%s'", TD, file))
nanlist = ''
do for [p in PRECS] {
    do for [t in TRACKS] {
        if (has(p, t)) {
            d4 = drift4(f(p, t))
            if (strstrt(d4, 'nan') || strstrt(d4, 'inf') || strlen(d4) == 0) {
                nanlist = nanlist . (strlen(nanlist) ? ', ' : '') . t . ' in ' . p
            }
        }
    }
}

do for [cols in SIZES] {
    c = cols + 0
    eval begin(c, c == 2 ? 4.6 : 6.9)
    if (c == 2) {
        G_rows = 2; G_cols = 3; G_left = 0.085; G_right = 0.99; G_bottom = 0.1; G_top = 0.845
        G_hsp = 0.06; G_vsp = 0.125
    } else {
        G_rows = 3; G_cols = 2; G_left = 0.2; G_right = 0.95; G_bottom = 0.065; G_top = 0.85
        G_hsp = 0.17; G_vsp = 0.085
    }
    eval keyarea(c == 2 ? 5 : 3)
    plot for [t in LINES] NaN w l lw 2 lc rgb track_color(t) t t, \
         for [t in MARKS] NaN w p pt mark_pt(t) ps 0.7 lw 1.2 lc rgb track_color(t) t t . ' (on sm)', \
         NaN w p pt PT_END ps PS lc rgb '#444444' t 'end', \
         NaN w p pt PT_NEG ps 1.0 lw 1.5 lc rgb '#444444' t 'λ_{min} < 0', \
         NaN w p pt PT_NAN ps 1.1 lw 2 lc rgb '#444444' t 'NaN'
    eval keydone
    set logscale xy
    set format x '10^{%T}'
    set format y '10^{%T}'
    set xrange [1 : tmax(f('f32', 'sm')) * 2]
    set xtics auto
    set mxtics 10
    set autoscale y
    set ytics auto
    i = 0
    do for [p in PRECS] {
        i = i + 1
        eval panel(i)
        set title sprintf('(%s) %s, %s', word('a b c d e', i), config(f('f32', 'sm'), 'model'), p)
        set xlabel (c == 2 && i <= 3) || (c == 1 && i <= 4) ? '' : '{/:Italic t} (tokens)'
        set ylabel (c == 2 && (i == 1 || i == 4)) || (c == 1 && i % 2 == 1) ? 'relative drift of {/:Italic A_t}' : ''
        plot for [t in LINES] src(p, t) u 1:2 w l lw 2 lc rgb track_color(t), \
             for [k = 1:2] src(p, word(MARKS, k)) every 2::(k - 1) u 1:2 w p pt mark_pt(word(MARKS, k)) ps 0.7 lw 1.2 \
                 lc rgb track_color(word(MARKS, k)), \
             for [t in TRACKS] ends(src(p, t), 2) u 1:($3 > 0 ? NaN : $2) w p pt PT_END ps PS lc rgb track_color(t), \
             for [t in TRACKS] firstneg(src(p, t), 6, 2) u 1:2 w p pt PT_NEG ps 1.0 lw 1.5 lc rgb track_color(t), \
             for [t in TRACKS] ends(src(p, t), 2) u 1:($3 > 0 ? $2 : NaN) w p pt PT_NAN ps 1.1 lw 2 lc rgb track_color(t), \
             for [t in TRACKS] nanends(src(p, t), 2) u 1:2:('NaN') w labels offset 0, 0.9 font ',7' tc rgb track_color(t)
    }
    eval panel(6)
    set title (c == 2 ? '(f) cost and drift at {/:Italic t} = ' : '(f) cost, drift at ') . TDs
    set xlabel 'ns per step (one core)'
    set ylabel ''
    set xrange [300 : 3e6]
    set xtics 1e3, 10, 1e6
    set mxtics 10
    set yrange [1e-16 : 1e4]
    eval keystyle
    set key inside bottom left vertical Left reverse maxrows 5 samplen 0.5
    if (strlen(nanlist)) {
        set label 1 'NaN by ' . TDs . ': ' . nanlist at graph 0.03, graph 0.95 left front font (c == 2 ? ',8' : ',6')
    }
    plot for [t in TRACKS] for [j = 1:5] costrows(t, word(PRECS, j)) u 1:($2 > 0 ? $2 : NaN) \
             w p pt (word(PSHAPE, j) + 0) ps 0.8 lc rgb track_color(t), \
         for [j = 1:5] NaN w p pt (word(PSHAPE, j) + 0) ps 0.8 lc rgb '#444444' t word(PRECS, j)
    unset label 1
    eval keystyle
    eval finish(c)
}
