# statenorm.gp: ||S_t||_F against t, log-log, for la, delta, rls, vla1 and vla3 (SPEC section 10,
# claims 1 and 3): left, the synthetic lmlike stream out to the longest horizon; right, the real
# trace of the source notebook's layer (T = 1000) with the notebook's own curves laid on top.
# Usage: gnuplot -e "dir='data'; out='figures/statenorm'" plots/statenorm.gp
#   dir:    holds statenorm-lmlike-MODEL.dat and statenorm-trace-MODEL.dat (vla-statenorm tables,
#           4 runs each); out: the figure's path without extension (writes OUT.png and OUT.pdf)
#   shared: optional, the shared folder (default ../shared) for the notebook's exp2_notebook_traj.tsv

if (!exists("dir")) dir = "data"
if (!exists("out")) out = "figures/statenorm"
if (!exists("shared")) shared = "../shared"
models = "la delta rls vla1 vla3"
colors = "#d62728 #ff7f0e #2ca02c #9467bd #1f77b4"
nbnames = "linear deltanet - - vla"
lite = "#80d62728 #80ff7f0e #802ca02c #809467bd #801f77b4"
syn(m) = dir . "/statenorm-lmlike-" . m . ".dat"
trc(m) = dir . "/statenorm-trace-" . m . ".dat"
nb = shared . "/data/lmtrace-seed7/exp2_notebook_traj.tsv"
have(f) = system("[ -r '" . f . "' ] && echo 1 || echo 0") + 0
have_nb = have(nb)

# every table must be there: a missing curve would silently change what the figure says
do for [i = 1:5] {
    if (!have(syn(word(models, i))) || !have(trc(word(models, i)))) {
        print sprintf("statenorm.gp: missing %s or %s", syn(word(models, i)), trc(word(models, i)))
        exit status 1
    }
}

# the mean over the runs (heads) at each checkpoint, as the notebook reports its curves
mean(f) = "< awk '!/^#/ && NF { s[$1] += $2; n[$1]++ } END { for (t in s) print t, s[t] / n[t] }' '" . f . "' | sort -g"

# the legend carries each model's growth exponent at its last t, averaged over the runs
array gs[5]
array gt[5]
array tmax[5]
do for [i = 1:5] {
    stats syn(word(models, i)) using 1 nooutput
    tmax[i] = STATS_max
    stats syn(word(models, i)) using ($1 == tmax[i] ? $5 : 1/0) nooutput
    gs[i] = STATS_mean
    stats trc(word(models, i)) using ($1 == 1000 ? $5 : 1/0) nooutput
    gt[i] = STATS_mean
}
T = tmax[1]
pow10(x) = sprintf("10^{%d}", int(log10(x) + 0.5))

# one mark every 1/20 decade of t for the notebook's 1000 points
sparse(t) = (t == 1 || floor(20 * log10(t)) != floor(20 * log10(t - 1)))

do for [fmt in "png pdf"] {
    if (fmt eq "png") {
        set terminal pngcairo size 1500, 620 font "sans,11" enhanced
        set output out . ".png"
    } else {
        set terminal pdfcairo size 12.5in, 5.2in font "sans,10" enhanced
        set output out . ".pdf"
    }
    set multiplot layout 1, 2 margins 0.06, 0.985, 0.11, 0.83 spacing 0.07 \
        title "||S_t||_F against t (d = 32, f32; thick: mean over 4 heads, thin: each head). la grows on both streams; vla3 levels off on the synthetic one\nbut on the real trace it is still growing like t^{1/2} at T = 1000"
    set logscale xy
    set format x "10^{%L}"
    set format y "10^{%L}"
    set grid xtics ytics mxtics mytics lc rgb "#e6e6e6" lw 1, lc rgb "#f2f2f2" lw 1
    set xlabel "t (tokens)"
    set ylabel "||S_t||_F"
    set key top left Left reverse samplen 2 spacing 1.1 box opaque
    set border lw 1

    # left: synthetic lmlike
    set title sprintf("synthetic lmlike stream: q, k, v i.i.d. normal with sd 0.23, u = unit(W k); t to %s", pow10(T))
    set xrange [1:T * 1.5]
    set yrange [1e-4:1e5]
    set key bottom left Left reverse maxrows 8 samplen 2 spacing 1.1 box opaque
    set arrow 1 from 1000, graph 0 to 1000, graph 1 nohead dt 3 lc rgb "#888888"
    set label 1 "notebook's T = 1000" at 1000 * 1.2, 3e4 tc rgb "#666666"
    plot for [i = 1:5] syn(word(models, i)) using 1:2 with lines lw 0.7 lc rgb word(lite, i) notitle, \
         for [i = 1:5] mean(syn(word(models, i))) using 1:2 with lines lw 2.5 \
             lc rgb word(colors, i) title sprintf("%s  (slope %.2f at t = %s)", word(models, i), gs[i], pow10(T)), \
         2.5 * sqrt(x) with lines dt 2 lw 1.5 lc rgb "#555555" title "2.5 t^{1/2}", \
         '+' using (1000):(1633.9) every ::0::0 with points pt 3 ps 2.2 lw 2 lc rgb "#d62728" \
             title "claim 3, la 1633.9 (notebook seed 42)", \
         '+' using (1000):(14.52) every ::0::0 with points pt 3 ps 2.2 lw 2 lc rgb "#1f77b4" \
             title "claim 3, vla3 14.52"

    # right: the real trace
    set title "real trace lmtrace-seed7: the notebook's layer, T = 1000 (rls, vla1: on vla3's inputs)"
    set xrange [1:1500]
    set yrange [0.5:5000]
    set key top left Left reverse maxrows 10 samplen 2 spacing 1.1 box opaque
    unset arrow 1
    unset label 1
    if (have_nb) {
        plot for [i = 1:5] trc(word(models, i)) using 1:2 with lines lw 0.7 lc rgb word(lite, i) notitle, \
             for [i = 1:5] mean(trc(word(models, i))) using 1:2 with lines lw 2.5 \
                 lc rgb word(colors, i) title sprintf("%s  (slope %.2f at t = 1000)", word(models, i), gt[i]), \
             2 * x with lines dt 2 lw 1.5 lc rgb "#555555" title "2 t", \
             for [j in "1 2 5"] nb using 2:((strcol(1) eq word(nbnames, j + 0) && sparse($2)) ? $3 : 1/0) \
                 with points pt 6 ps 0.9 lc rgb word(colors, j + 0) \
                 title sprintf("notebook's own %s (PyTorch f32)", word(nbnames, j + 0)), \
             '+' using (1000):(1633.9) every ::0::0 with points pt 3 ps 2.2 lw 2 lc rgb "#d62728" notitle, \
             '+' using (1000):(14.52) every ::0::0 with points pt 3 ps 2.2 lw 2 lc rgb "#1f77b4" notitle
    } else {
        plot for [i = 1:5] trc(word(models, i)) using 1:2 with lines lw 0.7 lc rgb word(lite, i) notitle, \
             for [i = 1:5] mean(trc(word(models, i))) using 1:2 with lines lw 2.5 \
                 lc rgb word(colors, i) title sprintf("%s  (slope %.2f at t = 1000)", word(models, i), gt[i])
    }
    unset multiplot
    unset output
}
