# jacobian.gp: the write Jacobian J_t = I - k' alpha^T (docs/math.md section 7, claim 2) from
# bin/vla-jacobian tables of 8 heads each: (a)-(e) ||J_t||_2 over each checkpoint window (the
# largest over the heads, and the heads' mean 99th percentile and median) beside the lines 1 and the
# golden ratio; (f) the finite-time largest Lyapunov exponent of J_1 ... J_t, the heads' mean and
# range: each head has its own inputs and its own start vector, and at short horizons the exponent
# depends on both. Usage: gnuplot -e "dir='data'; out='figures/jacobian'" plots/jacobian.gp reads
# DIR/jacobian-MODEL-STREAM-PREC.dat; writes OUT.pdf/png and OUT-1col.pdf/png
if (!exists("out")) out = 'figures/jacobian'
load system("dirname '" . ARG0 . "'") . '/style.gp'

RUNS = 'vla3-lmlike-f64 vla3-gauss-f64 rls-gauss-f64 vla1-lmlike-f64 vla1-gauss-f64 la-lmlike-f64'
tab(r) = dir . '/jacobian-' . r . '.dat'
F32 = tab('vla3-lmlike-f32')
do for [r in RUNS . ' vla3-lmlike-f32'] {
    if (!have(tab(r))) { print 'jacobian.gp: missing ' . tab(r); exit status 1 }
}
# a run's name from its table: model, stream
name(r) = sprintf('%s, %s', config(tab(r), 'model'), stream_name(tab(r)))
golden = (1 + sqrt(5)) / 2
C_MAX = '#D55E00'
C_P99 = '#E69F00'
C_P50 = '#0072B2'
# the Lyapunov panel: vla3 on both streams and rls, whose exponents are negative at every checkpoint
# of every head (vla1's is positive on gauss until t ~ 10^4, la's is 0: J_t = I)
LYAP = 'vla3-lmlike-f64 vla3-gauss-f64 rls-gauss-f64'
lcol(i) = word('#0072B2 #56B4E9 #009E73', i)
ymax(r) = real(system(sprintf("awk '!/^#/ && NF && $2 + 0 > m { m = $2 + 0 } END { print m + 0 }' '%s'", tab(r))))

do for [cols in SIZES] {
    c = cols + 0
    eval begin(c, c == 2 ? 4.6 : 6.9)
    if (c == 2) {
        G_rows = 2; G_cols = 3; G_left = 0.07; G_right = 0.99; G_bottom = 0.1; G_top = 0.86
        G_hsp = 0.06; G_vsp = 0.125
    } else {
        G_rows = 3; G_cols = 2; G_left = 0.2; G_right = 0.95; G_bottom = 0.065; G_top = 0.85
        G_hsp = 0.17; G_vsp = 0.085
    }
    eval keyarea(c == 2 ? 6 : 3)
    plot NaN w l lw 2 lc rgb C_MAX t 'maximum', \
         NaN w l lw 2 lc rgb C_P99 t '99th percentile', \
         NaN w l lw 2 lc rgb C_P50 t 'median', \
         NaN w l lw 1.2 dt 2 lc rgb 'black' t 'maximum in f32', \
         NaN w l dt 2 lw 1.2 lc rgb REF t 'golden ratio', \
         NaN w l dt 3 lw 1.2 lc rgb 'black' t '1'
    eval keydone
    set logscale x
    set format x '10^{%T}'
    set xrange [1 : tmax(tab(word(RUNS, 1))) * 2]
    set xtics auto
    set mxtics 10
    do for [i = 1:5] {
        r = word(RUNS, i)
        eval panel(i)
        set title sprintf('(%s) %s', word('a b c d e', i), name(r))
        set xlabel (c == 2 && i <= 3) || (c == 1 && i <= 4) ? '' : '{/:Italic t} (tokens)'
        set ylabel (c == 2 && (i == 1 || i == 4)) || (c == 1 && i % 2 == 1) ? '‖{/:Italic J_t}‖_2' : ''
        m = ymax(r)
        if (m > 3) {
            set logscale y
            set format y '%g'
            set yrange [0.9 : m * 1.5]
            set ytics (1, 2, 4, 8, 16, 32)
        } else {
            unset logscale y
            set format y '%.1f'
            set yrange [0.95 : m > 1.75 ? m + 0.05 : 1.8]
            set ytics 1, 0.2, 3
        }
        plot golden w l dt 2 lw 1.2 lc rgb REF, \
             1 w l dt 3 lw 1.2 lc rgb 'black', \
             band(tab(r), 3) u 1:2 w l lw 2 lc rgb C_P50, \
             band(tab(r), 4) u 1:2 w l lw 2 lc rgb C_P99, \
             band(tab(r), 2) u 1:4 w l lw 2 lc rgb C_MAX, \
             (i == 1 ? band(F32, 2) : '/dev/null') u 1:4 w l lw 1.2 dt 2 lc rgb 'black', \
             for [k = 2:4] band(tab(r), k) . ' | tail -1' u 1:(k == 2 ? $4 : $2) w p pt PT_END ps PS \
                 lc rgb (k == 2 ? C_MAX : k == 3 ? C_P50 : C_P99)
    }
    eval panel(6)
    set title (c == 2 ? '(f) Lyapunov exponent λ_t of ' : '(f) λ_t of ') . '{/:Italic J}_1⋯{/:Italic J_t}'
    set xlabel '{/:Italic t} (tokens)'
    set ylabel '−λ_t'
    set logscale y
    set format y '10^{%T}'
    # the largest -lambda_t of the tables, and two decades above it for the key
    lmax = real(system(sprintf("cat %s | awk '!/^#/ && NF && $8 !~ /nan|inf/ && -$8 > m { m = -$8 } END { print m + 0 }'", tab(word(LYAP, 1)) . ' ' . tab(word(LYAP, 2)) . ' ' . tab(word(LYAP, 3)))))
    set yrange [* : lmax > 0 ? lmax * 300 : 1]
    set ytics auto
    eval keystyle
    set key inside top right vertical Left reverse samplen 1.2 maxrows 5
    plot for [i = 1:3] band(tab(word(LYAP, i)), 8) u 1:(-$3):(-$4) w filledcurves fs transparent solid 0.25 noborder lc rgb lcol(i), \
         for [i = 1:3] band(tab(word(LYAP, i)), 8) u 1:(-$2) w l lw 1.5 lc rgb lcol(i) t name(word(LYAP, i)), \
         for [i = 1:3] band(tab(word(LYAP, i)), 8) . ' | tail -1' u 1:(-$2) w p pt PT_END ps PS lc rgb lcol(i), \
         30 / x w l dt 3 lw 1.2 lc rgb REF t '∝ 1/{/:Italic t}'
    eval keystyle
    eval finish(c)
}
