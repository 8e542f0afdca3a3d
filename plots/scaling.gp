# scaling.gp: what a step costs on one CPU core (SPEC section 10, claim 5), from a vla-scaling table:
# ns per step against d and against T for each model beside causal softmax attention, the
# crossover where softmax's total time passes the model's marked, and the crossover against d.
# Usage: gnuplot -e "dir='data'; out='figures/scaling'" plots/scaling.gp
#   dir: holds scaling.dat (bin/vla-scaling); out: the path without extension (OUT.png, OUT.pdf)
#   optional: prec (code, default 1 = f32), dref (the d of the middle panel, default 32)

if (!exists("dir")) dir = "data"
if (!exists("out")) out = "figures/scaling"
if (!exists("prec")) prec = 1
if (!exists("dref")) dref = 32
f = dir . "/scaling.dat"
if (system("[ -r '" . f . "' ] && echo 1 || echo 0") + 0 == 0) {
    print "scaling.gp: missing " . f
    exit status 1
}

names = "la delta rls vla1 vla3"
colors = "#d62728 #ff7f0e #2ca02c #9467bd #1f77b4"
array pts[5] = [7, 5, 9, 11, 13]
precname = "f64 f32 f16 bf16 f16-f32 bf16-f32"
# The table's blocks: the models, then softmax (model -1), then the crossovers (model codes again
# after the softmax rows); awk picks the rows, s marks that the softmax rows have begun.
rows(cond) = "< awk '!/^#/ && NF { if ($1 == -1) s = 1; if (" . cond . ") print }' '" . f . "'"
model_at_T(m, T) = rows(sprintf("!s && $1 == %d && $2 == %d && $4 == %d", m, prec, T))
model_at_d(m, d) = rows(sprintf("!s && $1 == %d && $2 == %d && $3 == %d", m, prec, d))
softmax_d(d, meas) = rows(sprintf("$1 == -1 && $2 == %d && $3 == %d && $8 == %d", prec, d, meas))
softmax_d_all(d) = rows(sprintf("$1 == -1 && $2 == %d && $3 == %d", prec, d))
softmax_T(T) = rows(sprintf("$1 == -1 && $2 == %d && $4 == %d", prec, T))
cross_m(m) = rows(sprintf("s && $1 == %d && $2 == %d", m, prec))
cross_at(m, d) = rows(sprintf("s && $1 == %d && $2 == %d && $3 == %d", m, prec, d))

# what the table holds: the models present, the largest T, the softmax's last measured length
stats rows(sprintf("!s && $1 >= 0 && $2 == %d", prec)) using 4 nooutput
Tmax = STATS_max
stats rows(sprintf("!s && $1 >= 0 && $2 == %d", prec)) using 3 nooutput
dmin = STATS_min
dmax = STATS_max
have(m) = system(sprintf("awk '!/^#/ && NF && $1 == %d && $2 == %d { n++ } END { print n + 0 }' '%s'", m, prec, f)) + 0 > 0
stats softmax_d(dref, 1) using 4 nooutput
Tsm = STATS_max
array cx[5]
do for [m = 0:4] {
    cx[m + 1] = 0
    if (have(m)) {
        stats cross_at(m, dref) using 4 nooutput
        cx[m + 1] = STATS_max
    }
}
# the stated header lines, quoted under the figure: where timings came from
rep = system("awk '/^# timer:/ { for (i = 1; i <= NF; i++) if ($i == \"of\") { print $(i + 1); exit } }' '" . f . "'")
clk = system("awk '/^# timer:/ { print (/THREAD_CPUTIME/ ? \"thread CPU time\" : \"wall clock\"); exit }' '" . f . "'")
share = system("awk '/^# load:/ { for (i = 1; i <= NF; i++) if ($i == \"median\") { print $(i + 1); exit } }' '" . f . "'")

do for [fmt in "png pdf"] {
    if (fmt eq "png") {
        set terminal pngcairo size 1650, 600 font "sans,11" enhanced
        set output out . ".png"
    } else {
        set terminal pdfcairo size 13.75in, 5in font "sans,10" enhanced
        set output out . ".pdf"
    }
    set multiplot layout 1, 3 margins 0.05, 0.99, 0.17, 0.83 spacing 0.06 \
        title sprintf("Cost per step on one CPU core (%s, strict; median of %s timings by the %s; the timings had %.0f%% of their core) beside causal softmax\nattention computed directly; softmax measured up to T = %d at d = %d, dashed beyond: a T^2 fitted to the measurements", \
                      word(precname, prec + 1), rep, clk, 100 * share, Tsm, dref)
    set logscale xy
    set grid xtics ytics mytics lc rgb "#e6e6e6" lw 1, lc rgb "#f4f4f4" lw 1
    set border lw 1
    # (a) against d
    set key bottom right Left reverse samplen 2 spacing 1.05 box opaque font ",10"
    set title sprintf("(a) ns per step against d (models at T = %d; softmax: open = a T^2)", Tmax)
    set xlabel "d (key = value dimension)"
    set ylabel "ns per step (softmax: per token, total / T)"
    set xrange [dmin / 1.2:dmax * 1.2]
    set xtics (16, 32, 64, 128, 256)
    set format y "10^{%L}"
    set yrange [*:*]
    plot for [m = 0:4] (have(m) ? model_at_T(m, Tmax) : "< true") using 3:5 with linespoints \
             lw 2 pt pts[m + 1] ps 1.1 lc rgb word(colors, m + 1) title word(names, m + 1), \
         softmax_T(1000) using 3:5 with linespoints lw 1.5 dt 1 pt 4 lc rgb "#333333" title "softmax, T = 10^3", \
         softmax_T(10000) using 3:5 with linespoints lw 1.5 dt 2 pt 4 lc rgb "#333333" title "softmax, T = 10^4", \
         softmax_T(1000) using 3:($8 == 1 ? $5 : 1/0) with points pt 5 lc rgb "#333333" notitle, \
         softmax_T(10000) using 3:($8 == 1 ? $5 : 1/0) with points pt 5 lc rgb "#333333" notitle

    # (b) against T at one d, with the crossovers
    set title sprintf("(b) ns per token against T at d = %d; x: crossover", dref)
    set key top left Left reverse samplen 2 spacing 1.05 box opaque font ",10"
    set xlabel "T (tokens)"
    set ylabel "ns per token"
    Tright = Tmax * 1.6 > 1.2e5 ? Tmax * 1.6 : 1.2e5 # claim 5's 43,000 always in view
    set xrange [10:Tright]
    set xtics auto
    set format x "10^{%L}"
    set arrow 1 from 43000, graph 0 to 43000, graph 1 nohead dt 3 lw 1.5 lc rgb "#777777"
    set label 1 "claim 5: a fused GPU kernel\nbeats softmax beyond\nabout 43,000 tokens" at 43000 * 0.85, graph 0.1 right tc rgb "#555555" font ",9"
    plot for [m = 0:4] (have(m) ? model_at_d(m, dref) : "< true") using 4:5 with linespoints \
             lw 2 pt pts[m + 1] ps 1.1 lc rgb word(colors, m + 1) notitle, \
         for [m = 0:4] (have(m) ? cross_at(m, dref) : "< true") using (10):5:(Tright - 10):(0) \
             with vectors nohead dt 3 lw 1.2 lc rgb word(colors, m + 1) notitle, \
         softmax_d(dref, 1) using 4:5 with linespoints lw 2 pt 4 ps 0.8 lc rgb "#333333" title "softmax (measured)", \
         softmax_d_all(dref) using 4:($8 == 0 || $4 == Tsm ? $5 : 1/0) with lines lw 2 dt 2 lc rgb "#333333" title "softmax (a T^2, extrapolated)", \
         for [m = 0:4] (have(m) ? cross_at(m, dref) : "< true") using 4:5 with points pt 2 ps 2.5 lw 2.5 \
             lc rgb word(colors, m + 1) title (have(m) ? sprintf("%s: T = %.0f", word(names, m + 1), cx[m + 1]) : "")
    unset arrow 1
    unset label 1

    # (c) the crossover against d
    set title "(c) crossover T (softmax total > T x model step) against d"
    set xlabel "d"
    set ylabel "crossover T (tokens)"
    set xrange [dmin / 1.2:dmax * 1.2]
    set xtics (16, 32, 64, 128, 256)
    set format x "%g"
    set yrange [30:1e5]
    set arrow 2 from graph 0, first 43000 to graph 1, first 43000 nohead dt 3 lw 1.5 lc rgb "#777777"
    set label 2 "claim 5 (a fused GPU kernel): about 43,000" at graph 0.97, first 43000 * 1.35 right tc rgb "#555555" font ",9"
    set key bottom right Left reverse samplen 2 spacing 1.05 box opaque font ",10"
    plot for [m = 0:4] (have(m) ? cross_m(m) : "< true") using 3:4 with linespoints \
             lw 2 pt pts[m + 1] ps 1.1 lc rgb word(colors, m + 1) title word(names, m + 1)
    unset arrow 2
    unset label 2
    unset multiplot
    unset output
}
