# recall.gp: associative recall (docs/math.md section 7, claim 4) from bin/vla-recall tables:
# accuracy (the nearest stored value by cosine is the right one) against the number of pairs n, (a)
# with each model's own feature map and (b) with the identity in place of phi; and against the run's
# length 2n + G after G distractor pairs, (c) own features, (d) identity. Diamonds: the source's
# claims. Usage: gnuplot -e "dir='data'; out='figures/recall'" plots/recall.gp reads
# DIR/recall-capacity.dat (rows over n, gap 0) and DIR/recall-retention.dat (rows over the gap, one
# n); columns n gap acc read_err read_cos model features; writes OUT.pdf/png, OUT-1col.*
if (!exists("out")) out = 'figures/recall'
load system("dirname '" . ARG0 . "'") . '/style.gp'

cap = dir . '/recall-capacity.dat'
ret = dir . '/recall-retention.dat'
do for [f in cap . ' ' . ret] {
    if (!have(f)) { print 'recall.gp: missing ' . f; exit status 1 }
}
# rls and vla1 apply no feature map: the same curve in both columns
mpt(m) = m eq 'la' ? 4 : m eq 'delta' ? 6 : m eq 'rls' ? 8 : m eq 'vla1' ? 10 : 7
sel(m, feat) = (strcol(6) eq m && strcol(7) eq feat)
d = real(config(cap, 'd'))
n0 = real(system(sprintf("awk '!/^#/ && NF { print $1; exit }' '%s'", ret)))
runs_cap = header(cap, 'runs')
runs_ret = header(ret, 'runs')
# the ranges of n and of the length 2n + G, from the tables
lret(which) = real(system(sprintf("awk '!/^#/ && NF { v = 2 * $1 + $2; if (m == \"\" || (%s)) m = v } END { print m + 0 }' '%s'", which ? 'v > m' : 'v < m', ret)))
# claim 4: exact recall (1.0) at n = 24, DeltaNet 0.010 and la 0.074 there; held to length 512
$claim << EOD
24 1.0 vla3
24 0.010 delta
24 0.074 la
EOD

do for [cols in SIZES] {
    c = cols + 0
    eval begin(c, c == 2 ? 4.6 : 5.4)
    if (c == 2) {
        G_rows = 2; G_cols = 2; G_left = 0.085; G_right = 0.99; G_bottom = 0.1; G_top = 0.85
        G_hsp = 0.07; G_vsp = 0.17
    } else {
        G_rows = 2; G_cols = 2; G_left = 0.14; G_right = 0.97; G_bottom = 0.085; G_top = 0.84
        G_hsp = 0.09; G_vsp = 0.15
    }
    eval keyarea(c == 2 ? 8 : 4)
    plot for [m in MODELS] NaN w lp lw 2 pt mpt(m) ps 0.6 lc rgb model_color(m) t m . (m eq 'rls' || m eq 'vla1' ? ' (no φ)' : ''), \
         NaN w l dt 3 lw 1.2 lc rgb 'black' t 'chance 1/{/:Italic n}', \
         NaN w p pt 12 ps 1.3 lw 1.5 lc rgb '#444444' t 'claim 4'
    eval keydone
    set logscale x 2
    set format x '%g'
    set yrange [0 : 1.05]
    set ytics 0, 0.2, 1
    set format y '%g'
    do for [k = 1:4] {
        eval panel(k)
        feat = (k % 2) ? 'own' : 'id'
        set ylabel (k % 2) ? 'accuracy' : ''
        if (k <= 2) {
            set title sprintf('(%s) %s%s', word('a b', k), c == 2 ? 'capacity, ' : '', feat eq 'own' ? 'own feature map φ' : 'identity features')
            set xlabel 'pairs {/:Italic n}'
            set xrange [tmin(cap) / 1.3 : tmax(cap) * 1.4]
            set xtics auto
            set arrow 1 from d, 0 to d, 1.05 nohead dt 2 lc rgb REF
            if (c == 2) { set label 1 '{/:Italic n} = {/:Italic d}' at d * 1.05, 0.5 left tc rgb REF }
            plot 1 / x w l dt 3 lw 1.2 lc rgb 'black', \
                 for [m in MODELS] cap u 1:(sel(m, feat) ? $3 : NaN) w lp lw 2 pt mpt(m) ps 0.6 lc rgb model_color(m), \
                 for [m in 'vla3 delta la'] $claim u 1:(strcol(3) eq m ? $2 : NaN) w p pt 12 ps 1.3 lw 1.5 lc rgb model_color(m)
            unset arrow 1
            unset label 1
        } else {
            set title sprintf('(%s) %s%s, {/:Italic n} = %d', word('c d', k - 2), c == 2 ? 'retention, ' : '', feat eq 'own' ? 'own φ' : 'identity', n0)
            set xlabel (c == 2 ? 'length 2{/:Italic n} + {/:Italic G} (tokens)' : '2{/:Italic n} + {/:Italic G}')
            set xrange [lret(0) / 1.3 : lret(1) * 1.4]
            set xtics auto
            if (512 <= lret(1) * 1.4) {  # the claim's length, where the tables reach it
                set arrow 1 from 512, 0 to 512, 1.05 nohead dt 2 lc rgb REF
            }
            plot 1.0 / n0 w l dt 3 lw 1.2 lc rgb 'black', \
                 for [m in MODELS] ret u (2 * $1 + $2):(sel(m, feat) ? $3 : NaN) w lp lw 2 pt mpt(m) ps 0.6 lc rgb model_color(m), \
                 '+' u (512):(1.0) every ::0::0 w p pt 12 ps 1.3 lw 1.5 lc rgb model_color('vla3')
            unset arrow 1
        }
    }
    eval finish(c)
}
