# statenorm-long.gp: vla3 over 10^7 tokens (SPEC section 10, claims 1 and 6) in five precisions:
# ||S_t||_F, ||A_t||_F, and the relative errors of S_t and of the read-out o_t against the binary64
# run of the same inputs (--ref f64), each the mean over the runs still finite (thin: each run),
# against t; binary64 (dashed) is the same recurrence with the least rounding.
# Usage: gnuplot -e "dir='data'; out='figures/statenorm-long'" plots/statenorm-long.gp
#   dir: holds statenorm-long-vla3-PREC.dat (vla-statenorm tables) for PREC in f64 f32 f16-f32
#        f16 bf16; out: the figure's path without extension (writes OUT.png and OUT.pdf)

if (!exists("dir")) dir = "data"
if (!exists("out")) out = "figures/statenorm-long"
precs = "f32 f16-f32 f16 bf16 f64" # f64 last: drawn on top, dashed
colors = "#1f77b4 #2ca02c #ff7f0e #d62728 #000000"
lite = "#801f77b4 #802ca02c #80ff7f0e #80d62728 #80000000"
dash = "1 1 1 1 2"
lw = "2.5 2.5 2.5 2.5 1.5"
NP = 5
tab(p) = dir . "/statenorm-long-vla3-" . p . ".dat"
have(f) = system("[ -r '" . f . "' ] && echo 1 || echo 0") + 0
do for [i = 1:NP] {
    if (!have(tab(word(precs, i)))) {
        print sprintf("statenorm-long.gp: missing %s", tab(word(precs, i)))
        exit status 1
    }
}
# the mean over the runs whose value is finite at each checkpoint (column c)
mean(f, c) = sprintf("< awk '!/^#/ && NF && $%d ~ /^-?[0-9]/ { s[$1] += $%d; n[$1]++ } END { for (t in s) print t, s[t] / n[t] }' '%s' | sort -g", c, c, f)
# how many runs end non-finite, and the first checkpoint where one is
nbad(f) = system("awk '!/^#/ && NF { last[b] = $2 } !NF { b++ } END { for (i in last) n += last[i] !~ /^-?[0-9]/; print n + 0 }' '" . f . "'") + 0
tbad(f) = system("awk '!/^#/ && NF && $2 !~ /^-?[0-9]/ && (!t || $1 < t) { t = $1 } END { print t + 0 }' '" . f . "'") + 0
bad(f) = nbad(f) ? sprintf(", %d of %s runs NaN from t = %.2g", nbad(f), runs(f), tbad(f)) : ""
runs(f) = system("awk '/^# runs:/ { print $3 }' '" . f . "'")
steps(f) = system("awk '/^# steps:/ { print $3 }' '" . f . "'")
backend(f) = system("awk '/^# backend:/ { print $3 }' '" . f . "'")
# each precision's values at its last checkpoint, for the legend
# thin lines, and the error panel: every precision but binary64 (drawn under f32, which it follows)
NT = NP - 1
# the mean of column c over the runs finite at the last checkpoint T (-1: none is)
lastmean(f, c, T) = system(sprintf("awk '!/^#/ && NF && $1 == %.0f && $%d ~ /^-?[0-9]/ { s += $%d; n++ } END { print n ? s / n : -1 }' '%s'", T, c, c, f)) + 0
array sl[NP]
array al[NP]
array el[NP]
array ol[NP]
do for [i = 1:NP] {
    stats tab(word(precs, i)) using 1 nooutput
    T = STATS_max
    stats tab(word(precs, i)) using ($1 == T ? $2 : 1/0) nooutput
    sl[i] = STATS_mean
    stats tab(word(precs, i)) using ($1 == T ? $3 : 1/0) nooutput
    al[i] = STATS_mean
    el[i] = lastmean(tab(word(precs, i)), 6, T)
    ol[i] = lastmean(tab(word(precs, i)), 7, T)
}
R = runs(tab("f32"))

do for [fmt in "png pdf"] {
    if (fmt eq "png") {
        set terminal pngcairo size 1600, 1150 font "sans,11" enhanced
        set output out . ".png"
    } else {
        set terminal pdfcairo size 13.3in, 9.6in font "sans,10" enhanced
        set output out . ".pdf"
    }
    set multiplot layout 2, 2 margins 0.06, 0.99, 0.06, 0.92 spacing 0.07, 0.09 \
        title sprintf("vla3 over %.0e tokens (lmlike, d = 32, nudge on, strict; thick: mean over %s runs, thin: each run; backend %s)", T, R, backend(tab("f32")))
    set logscale xy
    set format x "10^{%L}"
    set grid xtics ytics mxtics mytics lc rgb "#e6e6e6" lw 1, lc rgb "#f2f2f2" lw 1
    set xlabel "t (tokens)"
    set xrange [1:T * 1.5]
    set key bottom right Left reverse samplen 2 spacing 1.1 box opaque
    set border lw 1

    set title "||S_t||_F: the state's norm"
    set ylabel "||S_t||_F"
    set format y "%g"
    plot for [i = 1:NT] tab(word(precs, i)) using 1:2 with lines lw 0.6 lc rgb word(lite, i) notitle, \
         for [i = 1:NP] mean(tab(word(precs, i)), 2) using 1:2 with lines lw word(lw, i) + 0 \
             dt int(word(dash, i)) lc rgb word(colors, i) \
             title sprintf("%s  (%.3g at t = %.0e%s)", word(precs, i), sl[i], T, bad(tab(word(precs, i))))

    set title "||A_t||_F: the tracked inverse of M_t (the nudge adds 10^{-3} I every 20 steps)"
    set ylabel "||A_t||_F"
    plot for [i = 1:NT] tab(word(precs, i)) using 1:3 with lines lw 0.6 lc rgb word(lite, i) notitle, \
         for [i = 1:NP] mean(tab(word(precs, i)), 3) using 1:2 with lines lw word(lw, i) + 0 \
             dt int(word(dash, i)) lc rgb word(colors, i) \
             title sprintf("%s  (%.3g at t = %.0e)", word(precs, i), al[i], T)

    set title "||S_t - S_t^{f64}||_F / ||S_t^{f64}||_F: the state against binary64 on the same inputs"
    set ylabel "relative error of S_t"
    set format y "10^{%L}"
    set yrange [1e-9:10]
    set key top left Left reverse samplen 2 spacing 1.1 box opaque
    plot for [i = 1:NT] tab(word(precs, i)) using 1:6 with lines lw 0.6 lc rgb word(lite, i) notitle, \
         for [i = 1:NT] mean(tab(word(precs, i)), 6) using 1:2 with lines lw 2.5 \
             lc rgb word(colors, i) title sprintf("%s  (%.2g at t = %.0e)", word(precs, i), el[i], T)

    set title "||o_t - o_t^{f64}|| / ||o_t^{f64}||: the read-out, whose denominator n . phi(q) grows like t"
    set ylabel "relative error of o_t"
    set yrange [1e-9:1e6]
    plot for [i = 1:NT] tab(word(precs, i)) using 1:7 with lines lw 0.6 lc rgb word(lite, i) notitle, \
         for [i = 1:NT] mean(tab(word(precs, i)), 7) using 1:2 with lines lw 2.5 \
             lc rgb word(colors, i) title sprintf("%s  (%.2g at t = %.0e)", word(precs, i), ol[i], T)
    unset multiplot
    unset output
}
