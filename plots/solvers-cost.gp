# solvers-cost.gp: cost against accuracy of the ways that keep M and solve (docs/math.md 4.7-4.10):
# vla3's time per step at d = 16 on one core (bin/vla-scaling) against the error of the vector it
# uses at t = 10^5 (x_err, the mean of 2 heads; lmlike, nudge off, reference lib in binary64);
# colour: the way, shape: the precision; cg:K and cheb:K of one precision joined in the order of K
# (K = 1, 2, 4, 8, 16 and 2, 4, 8, 16). (a) without forgetting, (b) with gamma = 0.999 (K = 8 only).
# A run that turned NaN or ended with x_err >= 1 is drawn at the top edge. A shorter run than 10^5
# steps is read at its last step, and d comes from the tables.
# Usage: gnuplot -e "dir='data'; out='figures/solvers-cost'" plots/solvers-cost.gp
#   reads DIR/solvcost-WAY.dat (bin/vla-scaling: columns model prec track d T ns_per_step ...) and
#   DIR/solvers-lmlike-gGAMMA-PREC-WAY.dat (bin/vla-drift: column 15 is x_err); writes OUT.pdf/png,
#   OUT-1col.*
if (!exists("out")) out = 'figures/solvers-cost'
load system("dirname '" . ARG0 . "'") . '/style.gp'

CG = 'cg1 cg2 cg4 cg8 cg16'
CHEB = 'cheb2 cheb4 cheb8 cheb16'
ONE = 'sm sr solve'
fam_color(w) = w[1:2] eq 'cg' ? '#D55E00' : w[1:4] eq 'cheb' ? '#009E73' : w eq 'solve' ? '#000000' : track_color(w)
PSHAPE = '7 5 9 11 13'         # f32 f16 bf16 f16-f32 bf16-f32 (as tracks.gp)
TOP = 10
tab(g, p, w) = sprintf('%s/solvers-lmlike-%s-%s-%s.dat', dir, g, p, w)
cost(w) = sprintf('%s/solvcost-%s.dat', dir, w)
# x_err at t = TE (10^5, or the tables' horizon when shorter), of the runs at the tables' d
TE = tmax(tab('g1', 'bf16', 'solve')) < 100000 ? tmax(tab('g1', 'bf16', 'solve')) : 100000
TEs = TE == 100000 ? '10^5' : sprintf('%.0f', TE)
DD = config(tab('g1', 'bf16', 'solve'), 'd')
# "ns x_err" of (gamma, precision, way), x_err -1 where a head's is not finite at TE; nothing
# where the table or the timing is missing
pt(g, p, w) = (have(tab(g, p, w)) && have(cost(w))) ? sprintf("awk -v P=%s -v F='%s' -v T=%.0f -v DD=%s 'BEGIN { while ((getline l < F) > 0) { split(l, x); if (l !~ /^#/ && x[1] == T) { if (x[15] ~ /nan|inf/) bad = 1; s += x[15]; n++ } } e = (n && !bad) ? s / n : -1 } !/^#/ && NF && $1 == \"vla3\" && $2 == P && $4 == DD { print $6, e }' '%s';", p, tab(g, p, w), TE, DD, cost(w)) : ''
pts(g, p, ws) = '< (true; ' . sum_pts(g, p, ws) . ')'
sum_pts(g, p, ws) = words(ws) == 0 ? '' : pt(g, p, word(ws, 1)) . (words(ws) > 1 ? sum_pts(g, p, ws[strlen(word(ws, 1)) + 2:]) : '')
y(e) = (e < 0 || e >= 1) ? TOP : e
if (!have(cost('solve')) || !have(tab('g1', 'bf16', 'solve'))) { print 'solvers-cost.gp: missing ' . cost('solve') . ' or ' . tab('g1', 'bf16', 'solve'); exit status 1 }

do for [cols in SIZES] {
    c = cols + 0
    eval begin(c, c == 2 ? 3.3 : 5.4)
    if (c == 2) {
        G_rows = 1; G_cols = 2; G_left = 0.08; G_right = 0.97; G_bottom = 0.13; G_top = 0.8
        G_hsp = 0.07
    } else {
        G_rows = 2; G_cols = 1; G_left = 0.17; G_right = 0.95; G_bottom = 0.07; G_top = 0.83
        G_vsp = 0.1
    }
    eval keyarea(c == 2 ? 10 : 3)
    plot for [w in 'sm sr solve cg1 cheb2'] NaN w lp pt 7 ps 0.6 lw 1.5 lc rgb fam_color(w) \
             t (w eq 'cg1' ? 'cg:K' : w eq 'cheb2' ? 'cheb:K' : w), \
         for [j = 1:5] NaN w p pt (word(PSHAPE, j) + 0) ps 0.8 lc rgb '#444444' t word(PRECS, j)
    eval keydone
    set logscale xy
    set format x '10^{%T}'
    set format y '10^{%T}'
    set autoscale x
    set offsets graph 0.1, graph 0.1, 0, 0
    set yrange [* : 30]  # TOP and its label on top
    set ytics auto
    do for [gi = 1:2] {
        G = gi == 1 ? 'g1' : 'g0.999'
        eval panel(gi)
        set title (gi == 1 ? '(a) no forgetting' : '(b) γ = 0.999') . ', x\_err at {/:Italic t} = ' . TEs
        set ylabel (gi == 1 || c == 1) ? 'x\_err' : ''
        set label 1 'NaN or x\_err ≥ 1' at graph 0.02, first TOP * 2.2 left front font ',7' tc rgb '#444444'
        set xlabel (c == 2 || gi == 2) ? 'ns per step (vla3, {/:Italic d} = ' . DD . ', one core)' : ''
        plot for [j = 1:5] pts(G, word(PRECS, j), CG) u 1:(y($2)) w lp pt (word(PSHAPE, j) + 0) ps 0.7 lw 1 lc rgb fam_color('cg1'), \
             for [j = 1:5] pts(G, word(PRECS, j), CHEB) u 1:(y($2)) w lp pt (word(PSHAPE, j) + 0) ps 0.7 lw 1 lc rgb fam_color('cheb2'), \
             for [w in ONE] for [j = 1:5] pts(G, word(PRECS, j), w) u 1:(y($2)) w p pt (word(PSHAPE, j) + 0) ps 0.8 lc rgb fam_color(w)
    }
    eval finish(c)
}
