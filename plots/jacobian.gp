# jacobian.gp: the write Jacobian figure (SPEC section 7, claim 2): one panel per vla-jacobian table
# with the window max, p99 and p50 of ||J_t||_2 against t beside the lines 1 and the golden ratio,
# and a last panel with the finite-time Lyapunov exponent of every table against t.
# Usage: gnuplot -e "in='data/jacobian-a.dat data/jacobian-b.dat'; out='figures/jacobian'" plots/jacobian.gp
#   in:  one or more vla-jacobian tables, space-separated (the first block of each is plotted)
#   out: the figure's path without extension; writes OUT.png and OUT.pdf

if (!exists("in") || !exists("out")) {
    print "usage: gnuplot -e \"in='T1.dat T2.dat ...'; out='figures/jacobian'\" plots/jacobian.gp"
    exit status 2
}
n = words(in)
if (n < 1 || n > 11) {
    print "jacobian.gp: give 1 to 11 tables in 'in'"
    exit status 2
}

golden = (1 + sqrt(5)) / 2
colors = "#9467bd #2ca02c #17becf #ff7f0e #8c564b #1f77b4 #d62728 #e377c2 #7f7f7f #bcbd22 #000000"
# a panel's name from the table's header: model, stream, precision (and features when not own)
label(f) = system(sprintf("awk '/^# config:/ { for (i = 3; i <= NF; i++) { split($i, a, \"=\"); " . \
    "if (a[1] == \"model\") m = a[2]; if (a[1] == \"prec\") p = a[2]; " . \
    "if (a[1] == \"features\" && a[2] != \"own\") x = \" features=\" a[2] } } " . \
    "/^# stream:/ { s = $3 } END { printf \"%%s, %%s, %%s%%s\", m, s, p, x }' '%s'", f))
array names[n]
array ymax[n]
do for [i = 1:n] {
    f = word(in, i)
    names[i] = label(f)
    stats f index 0 using 2 nooutput
    ymax[i] = STATS_max
}

# the panels: n norm panels plus the Lyapunov panel, in rows of at most 4
np = n + 1
cols = np <= 4 ? np : 4
rows = int((np + cols - 1) / cols)

do for [fmt in "png pdf"] {
    if (fmt eq "png") {
        set terminal pngcairo size 420 * cols, 370 * rows font "sans,10" enhanced
        set output out . ".png"
    } else {
        set terminal pdfcairo size 3.6 * cols, 3.1 * rows font "sans,8" enhanced
        set output out . ".pdf"
    }
    set multiplot layout rows, cols margins 0.05, 0.98, 0.07, 0.91 spacing 0.055, 0.13 \
        title "Write Jacobian J_t = I - k' {/Symbol a}^T: ||J_t||_2 over each checkpoint window, and the Lyapunov exponent"
    set logscale x
    set format x "10^{%L}"
    set grid xtics ytics lc rgb "#dddddd"
    set xlabel "t (step)"
    do for [i = 1:n] {
        f = word(in, i)
        set title names[i]
        # a log axis keeps 1 and the golden ratio apart when a model's norm runs far above them
        hi = ymax[i] > 1.9 ? ymax[i] * 1.4 : 1.9
        unset nonlinear y # left by the Lyapunov panel of the previous format's pass
        if (ymax[i] > 3) {
            set logscale y
            set format y "%g"
            set ytics 1, 2
        } else {
            unset logscale y
            set format y "%.2f"
            set ytics autofreq
        }
        set yrange [0.95 : hi]
        set ylabel "||J_t||_2"
        # one key serves every panel: the first one's early steps leave its top left empty
        if (i == 1) {
            set key top left box opaque font ",9" samplen 2 spacing 1.1
        } else {
            unset key
        }
        plot golden w l dt 2 lw 1.5 lc rgb "#b8860b" title "golden ratio 1.618", \
             1 w l dt 3 lw 1.5 lc rgb "black" title "1", \
             f index 0 using 1:2 w l lw 2 lc rgb "#d62728" title "max", \
             f index 0 using 1:4 w l lw 2 lc rgb "#ff7f0e" title "p99", \
             f index 0 using 1:3 w l lw 2 lc rgb "#1f77b4" title "p50"
    }
    # the exponents span 1e-21 (la) to 1 (vla1's first steps), of either sign: asinh squeezes
    # the large ones and keeps the small ones apart, like a log axis that passes through 0
    unset logscale y
    s = 3e-5
    set nonlinear y via asinh(y / s) inverse s * sinh(y)
    set yrange [-0.1 : 1e3] # the decades above 1 hold the key, clear of the curves
    set ytics ("-0.1" -0.1, "-0.01" -0.01, "-10^{-3}" -1e-3, "-10^{-4}" -1e-4, "0" 0, \
               "10^{-4}" 1e-4, "10^{-3}" 1e-3, "0.01" 0.01, "0.1" 0.1, "1" 1)
    set title "Lyapunov exponent of J_1 ... J_t"
    set ylabel "(1/t) log ||x J_1 ... J_t||"
    set key default
    set key top center box opaque font ",7" samplen 1.5 spacing 0.9 maxrows 4 width -2
    plot 0 w l dt 3 lc rgb "black" notitle, \
         for [i = 1:n] word(in, i) index 0 using 1:8 w l lw 2 lc rgb word(colors, i) \
             dt 1 + (strstrt(names[i], "f32") + strstrt(names[i], "16") > 0) title names[i]
    unset multiplot
    set output
}
