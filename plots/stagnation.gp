# stagnation.gp: where round-to-nearest 16-bit sm stops moving A (bin/vla-drift's a_moved and
# a_moved_diag: the fraction of A's entries, and of its diagonal, that a step still changes), vla3
# with the nudge off, d = 8..64, in binary16 and bfloat16, on lmlike (solid) and gauss (dashed).
# With A_t ~ (lambda0 + t/d^2)^-1 I and a diagonal update ~ A_t^2/d^2, the update falls below half
# an ulp of A_t once t + lambda0 d^2 ~ 1/u: the marks on the diagonal panels sit at t = 1/u - lambda0 d^2
# (none where that is below 1: the diagonal stalls from the first step). Off the diagonal the entries
# are small and their ulp shrinks with them: they keep moving. The horizon comes from the tables,
# and the model and the nudge from their config lines.
# Usage: gnuplot -e "dir='data'; out='figures/stagnation'" plots/stagnation.gp
#   reads DIR/stagnation-PREC-STREAM-dD.dat; writes OUT.pdf/png and OUT-1col.pdf/png
if (!exists("out")) out = 'figures/stagnation'
load system("dirname '" . ARG0 . "'") . '/style.gp'

DS = '8 16 32 64'
f(p, s, d) = sprintf('%s/stagnation-%s-%s-d%s.dat', dir, p, s, d)
do for [p in 'f16 bf16'] {
    do for [s in 'lmlike gauss'] {
        do for [d in DS] {
            if (!have(f(p, s, d))) { print 'stagnation.gp: missing ' . f(p, s, d); exit status 1 }
        }
    }
}
dcolor(i) = word('#56B4E9 #009E73 #E69F00 #D55E00', i)
lambda0 = real(config(f('f16', 'lmlike', '8'), 'lambda0'))
urnd(p) = p eq 'f16' ? 2.0**-11 : 2.0**-8
onset(p, d) = 1 / urnd(p) - lambda0 * d * d
# the off-diagonal fraction from the whole's and the diagonal's
offdiag(d) = (column(13) * d * d - column(14) * d) / (d * d - d)

do for [cols in SIZES] {
    c = cols + 0
    eval begin(c, c == 2 ? 4.2 : 4.8)
    if (c == 2) {
        G_rows = 2; G_cols = 2; G_left = 0.085; G_right = 0.99; G_bottom = 0.1; G_top = 0.85
        G_hsp = 0.06; G_vsp = 0.13
    } else {
        G_rows = 2; G_cols = 2; G_left = 0.17; G_right = 0.97; G_bottom = 0.085; G_top = 0.8
        G_hsp = 0.09; G_vsp = 0.12
    }
    eval keyarea(c == 2 ? 7 : 4)
    plot for [i = 1:4] NaN w l lw 2 lc rgb dcolor(i) t '{/:Italic d} = ' . word(DS, i), \
         NaN w l lw 2 lc rgb '#444444' t 'lmlike', \
         NaN w l lw 1.5 dt 2 lc rgb '#444444' t 'gauss', \
         NaN w p pt 11 ps 0.9 lc rgb '#444444' t '{/:Italic t} = 1/{/:Italic u} − λ_0{/:Italic d}^2'
    eval keydone
    set logscale x
    unset logscale y
    set format x '10^{%T}'
    set format y '%g'
    T = tmax(f('f16', 'lmlike', word(DS, 1)))
    set xrange [1 : T * 1.5]
    set xtics auto
    set mxtics 10
    set yrange [0 : 1.1]
    set ytics 0, 0.25, 1
    k = 0
    do for [what in 'diag off'] {
        do for [p in 'f16 bf16'] {
            k = k + 1
            eval panel(k)
            g = f(p, 'lmlike', word(DS, 1))
            set title sprintf('(%s) %s %s, %s%s', word('a b c d', k), config(g, 'model'), p, what eq 'diag' ? 'diagonal of {/:Italic A_t}' : 'off the diagonal', config(g, 'nudge') eq 'off' ? '' : ', nudge on')
            set xlabel k > 2 ? '{/:Italic t} (tokens)' : ''
            set ylabel (k % 2) ? (c == 2 ? 'fraction changed per step' : 'fraction changed') : ''
            if (what eq 'diag') {
                plot for [i = 1:4] f(p, 'lmlike', word(DS, i)) u 1:14 w l lw 2 lc rgb dcolor(i), \
                     for [i = 1:4] f(p, 'gauss', word(DS, i)) u 1:14 w l lw 1.5 dt 2 lc rgb dcolor(i), \
                     for [i = 1:4] for [s in 'lmlike gauss'] lastrow(f(p, s, word(DS, i))) u 1:14 w p pt PT_END ps PS lc rgb dcolor(i), \
                     for [i = 1:4] '+' u (onset(p, word(DS, i) + 0)):(onset(p, word(DS, i) + 0) >= 1 ? 1.05 : NaN) every ::0::0 \
                         w p pt 11 ps 0.9 lc rgb dcolor(i)
            } else {
                plot for [i = 1:4] f(p, 'lmlike', word(DS, i)) u 1:(offdiag(word(DS, i) + 0)) w l lw 2 lc rgb dcolor(i), \
                     for [i = 1:4] f(p, 'gauss', word(DS, i)) u 1:(offdiag(word(DS, i) + 0)) w l lw 1.5 dt 2 lc rgb dcolor(i), \
                     for [i = 1:4] for [s in 'lmlike gauss'] lastrow(f(p, s, word(DS, i))) u 1:(offdiag(word(DS, i) + 0)) w p pt PT_END ps PS lc rgb dcolor(i)
            }
        }
    }
    eval finish(c)
}
