# scaling.gp: what a step costs on one CPU core (docs/math.md section 10, claim 5), from a
# bin/vla-scaling table: (a) ns per step against d for each model beside causal softmax attention's
# ns per token, (b) ns per token against T at one d, with the crossover where softmax's total time
# passes the model's marked, (c) the crossover against d, beside claim 5's 43,000 tokens. Usage:
# gnuplot -e "dir='data'; out='figures/scaling'" plots/scaling.gp reads DIR/scaling.dat (columns
# model prec track d T ns_per_step steps_per_s ns_total measured cpu_ns_per_step; the models'
# blocks, softmax's, then the crossovers); optional: prec (default f32), dref (the d of panel b,
# default 32); writes OUT.pdf/png and OUT-1col.pdf/png
if (!exists("out")) out = 'figures/scaling'
load system("dirname '" . ARG0 . "'") . '/style.gp'
if (!exists("prec")) prec = 'f32'
if (!exists("dref")) dref = 32
f = dir . '/scaling.dat'
if (!have(f)) { print 'scaling.gp: missing ' . f; exit status 1 }

# the table's parts: the model rows, softmax's (model softmax), then the crossovers (model names
# again after softmax's rows); s marks that softmax's rows have begun
rows(cond) = "< awk '!/^#/ && NF { if ($1 == \"softmax\") s = 1; if (" . cond . ") print }' '" . f . "'"
model_at_T(m, T) = rows(sprintf("!s && $1 == \"%s\" && $2 == \"%s\" && $5 == %d", m, prec, T))
model_at_d(m, d) = rows(sprintf("!s && $1 == \"%s\" && $2 == \"%s\" && $4 == %d", m, prec, d))
softmax_d(d) = rows(sprintf("$1 == \"softmax\" && $2 == \"%s\" && $4 == %d", prec, d))
softmax_T(T) = rows(sprintf("$1 == \"softmax\" && $2 == \"%s\" && $5 == %d", prec, T))
cross_m(m) = rows(sprintf("s && $1 == \"%s\" && $2 == \"%s\"", m, prec))
cross_at(m, d) = rows(sprintf("s && $1 == \"%s\" && $2 == \"%s\" && $4 == %d", m, prec, d))
colmax(src, c) = real(system(sprintf("%s | awk 'NR == 1 || $%d + 0 > m { m = $%d + 0 } END { print m + 0 }'", src[3:], c, c)))
colmin(src, c) = real(system(sprintf("%s | awk 'NR == 1 || $%d + 0 < m { m = $%d + 0 } END { print m + 0 }'", src[3:], c, c)))
Tmax = colmax(rows(sprintf("!s && $1 != \"softmax\" && $2 == \"%s\"", prec)), 5)
dmin = colmin(rows(sprintf("!s && $1 != \"softmax\" && $2 == \"%s\"", prec)), 4)
dmax = colmax(rows(sprintf("!s && $1 != \"softmax\" && $2 == \"%s\"", prec)), 4)
Tsm = colmax(rows(sprintf("$1 == \"softmax\" && $2 == \"%s\" && $4 == %d && $9 == 1", prec, dref)), 5)
# the two softmax lengths panel (a) draws: the table's two largest --Ts (the default run's 10^4, 10^5)
TS = system(sprintf("sed -n 's/^# Ts: //p' '%s' | head -1 | tr ',' ' '", f))
TA = word(TS, words(TS) > 1 ? words(TS) - 1 : 1)
TB = word(TS, words(TS))
mpt(m) = m eq 'la' ? 7 : m eq 'delta' ? 5 : m eq 'rls' ? 9 : m eq 'vla1' ? 11 : 13
SM = '#444444'

do for [cols in SIZES] {
    c = cols + 0
    eval begin(c, c == 2 ? 2.8 : 6.6)
    if (c == 2) {
        G_rows = 1; G_cols = 3; G_left = 0.075; G_right = 0.99; G_bottom = 0.15; G_top = 0.79
        G_hsp = 0.075
    } else {
        G_rows = 3; G_cols = 1; G_left = 0.17; G_right = 0.96; G_bottom = 0.055; G_top = 0.86
        G_vsp = 0.105
    }
    eval keyarea(c == 2 ? 9 : 3)
    plot for [m in MODELS] NaN w lp lw 2 pt mpt(m) ps 0.6 lc rgb model_color(m) t m, \
         NaN w lp lw 1.5 pt 5 ps 0.5 lc rgb SM t 'softmax', \
         NaN w lp lw 1.5 dt 2 pt 4 ps 0.5 lc rgb SM t 'softmax, fit', \
         NaN w p pt 2 ps 1.2 lw 2 lc rgb SM t 'crossover', \
         NaN w l dt 3 lw 1.5 lc rgb REF t 'claim 5'
    eval keydone
    set logscale xy
    set format y '10^{%T}'

    eval panel(1)
    set title sprintf('(a) against {/:Italic d}, {/:Italic T} = %s', gprintf('10^{%T}', Tmax))
    set xlabel '{/:Italic d}'
    set ylabel 'time per step or token (ns)'
    set xrange [dmin / 1.2 : dmax * 1.2]
    set xtics (16, 32, 64, 128, 256)
    set format x '%g'
    smv(T) = real(system(sprintf("%s | awk '$4 == %d { print $6; exit }'", softmax_T(T)[3:], dmin)))
    set label 1 'softmax, {/:Italic T} = ' . gprintf('%g', TB + 0) at dmin, smv(TB + 0) * 4 left tc rgb SM
    set label 2 'softmax, {/:Italic T} = ' . gprintf('%g', TA + 0) at dmin, smv(TA + 0) * 4 left tc rgb SM
    plot for [m in MODELS] model_at_T(m, Tmax) u 4:6 w lp lw 2 pt mpt(m) ps 0.6 lc rgb model_color(m), \
         for [T in TA . ' ' . TB] softmax_T(T + 0) u 4:6 w l lw 1.5 lc rgb SM, \
         for [T in TA . ' ' . TB] softmax_T(T + 0) u 4:($9 == 1 ? $6 : NaN) w p pt 5 ps 0.5 lc rgb SM, \
         for [T in TA . ' ' . TB] softmax_T(T + 0) u 4:($9 == 1 ? NaN : $6) w p pt 4 ps 0.5 lc rgb SM
    unset label 1
    unset label 2

    eval panel(2)
    set title sprintf('(b) against {/:Italic T}, {/:Italic d} = %d', dref)
    set xlabel '{/:Italic T} (tokens)'
    set ylabel (c == 1 ? 'time per token (ns)' : '')
    Tright = Tmax * 1.6 > 1.2e5 ? Tmax * 1.6 : 1.2e5
    set xrange [10 : Tright]
    set xtics 10, 100, 1e5
    set format x '10^{%T}'
    set arrow 1 from 43000, graph 0 to 43000, graph 1 nohead dt 3 lw 1.5 lc rgb REF
    plot for [m in MODELS] model_at_d(m, dref) u 5:6 w lp lw 2 pt mpt(m) ps 0.6 lc rgb model_color(m), \
         softmax_d(dref) u 5:($9 == 1 ? $6 : NaN) w lp lw 1.5 pt 5 ps 0.5 lc rgb SM, \
         softmax_d(dref) u 5:($9 == 0 || $5 == Tsm ? $6 : NaN) w l lw 1.5 dt 2 lc rgb SM, \
         for [m in MODELS] cross_at(m, dref) u 5:6 w p pt 2 ps 1.2 lw 2 lc rgb model_color(m)
    unset arrow 1

    eval panel(3)
    set title '(c) crossover against {/:Italic d}'
    set xlabel '{/:Italic d}'
    set ylabel 'crossover {/:Italic T} (tokens)'
    set xrange [dmin / 1.2 : dmax * 1.2]
    set xtics (16, 32, 64, 128, 256)
    set format x '%g'
    set autoscale y  # the crossovers where they are (the default run's [20, 1e5] cropped larger ones)
    plot for [m in MODELS] cross_m(m) u 4:5 w lp lw 2 pt mpt(m) ps 0.6 lc rgb model_color(m), \
         43000 w l dt 3 lw 1.5 lc rgb REF
    set yrange [*:*]
    eval finish(c)
}
