# recall.gp: the associative recall figure (SPEC section 7 "recall", claim 4): accuracy against the
# number of pairs n (capacity) and against the length 2n + G (retention past G distractors), one
# curve per model, the model's own feature map and the identity side by side.
# Usage: gnuplot -e "in='data/recall-capacity.dat data/recall-retention.dat'; out='figures/recall'" plots/recall.gp
#   in:  a vla-recall table over n (gap 0), then optionally one over the gap (one n); the model and
#        features of each block come from its columns
#   out: the figure's path without extension; writes OUT.png and OUT.pdf

if (!exists("in") || !exists("out")) {
    print "usage: gnuplot -e \"in='CAPACITY.dat [RETENTION.dat]'; out='figures/recall'\" plots/recall.gp"
    exit status 2
}
nin = words(in)
if (nin < 1 || nin > 2) {
    print "recall.gp: 'in' holds a capacity table and optionally a retention table"
    exit status 2
}
cap = word(in, 1)
ret = nin > 1 ? word(in, 2) : ""

models = "la delta rls vla1 vla3"
# rls and vla1 apply no feature map: their curves are the same in both columns
mlabel(m) = word(models, m + 1) . (m == 2 || m == 3 ? " (no phi)" : "")
colors = "#7f7f7f #ff7f0e #2ca02c #1f77b4 #d62728"
points = "4 6 8 10 7"
header(f, key) = system(sprintf("awk '/^# config:/ { for (i = 3; i <= NF; i++) if (index($i, \"%s=\") == 1) " . \
    "{ print substr($i, %d); exit } }' '%s'", key, strlen(key) + 2, f))
d = int(header(cap, "d"))

# claim 4's numbers: vla3 exact, delta 0.010 and la 0.074 at n = 24 (d = 32); held to length 512
$claim_cap << EOD
24 1.0
24 0.010
24 0.074
EOD
$claim_ret << EOD
512 1.0
EOD

# per table, the blocks with each feature map as lists of block indices ("0 2 4 ..."), and the
# model of every block (50 blocks per table at most)
array bmodel[100]
do for [t = 1:nin] {
    f = word(in, t)
    stats f using 1 nooutput
    nb = STATS_blocks
    own = ""; id = ""
    do for [b = 0:nb - 1] {
        stats f index b using 6:7 nooutput
        bmodel[t * 50 + b - 49] = int(STATS_min_x)
        if (int(STATS_min_y) == 0) { own = own . " " . b } else { id = id . " " . b }
    }
    if (t == 1) { cap_own = own; cap_id = id } else { ret_own = own; ret_id = id }
}
mof(t, b) = bmodel[t * 50 + b - 49]

do for [fmt in "png pdf"] {
    if (fmt eq "png") {
        set terminal pngcairo size 1300, (nin > 1 ? 820 : 430) font "sans,10" enhanced
        set output out . ".png"
    } else {
        set terminal pdfcairo size 11, (nin > 1 ? 7 : 3.7) font "sans,8" enhanced
        set output out . ".pdf"
    }
    set multiplot layout nin, 2 title sprintf("Associative recall at d = %d: nearest stored value by cosine", d)
    set grid xtics ytics lc rgb "#dddddd"
    set yrange [0 : 1.05]
    set ylabel "accuracy"
    set key outside right top box font ",8" spacing 1.0 samplen 2 Left reverse

    # capacity: accuracy against n; chance is 1/n, the load n = d is the claim's boundary
    set logscale x 2
    set xrange [3 : 90]
    set xtics (4, 8, 16, 24, 32, 48, 64)
    set xlabel "pairs n (gap 0)"
    set arrow 1 from d, 0 to d, 1.05 nohead dt 2 lc rgb "black"
    set label 1 sprintf("n = d", d) at d * 1.04, 0.55 left font ",8"
    do for [panel = 1:2] {
        list = panel == 1 ? cap_own : cap_id
        set title panel == 1 ? "capacity, own feature map (phi = ELU+1 for la, delta's read, vla3)" \
                             : "capacity, identity in place of phi (features=id)"
        plot 1 / x w l dt 3 lc rgb "black" title "chance 1/n", \
             for [b in list] cap index int(b) using 1:3 w lp lw 2 pt int(word(points, mof(1, int(b)) + 1)) \
                 lc rgb word(colors, mof(1, int(b)) + 1) title mlabel(mof(1, int(b))), \
             $claim_cap using 1:2 w p pt 12 ps 2 lw 2 lc rgb "black" title "claim 4 at n = 24"
    }
    unset arrow 1
    unset label 1

    if (nin > 1) {
        # retention: accuracy against the whole length 2n + G of the run; the claim's 512
        n0 = real(system(sprintf("awk '!/^#/ && NF { print $1; exit }' '%s'", ret)))
        set xrange [*:*]
        set autoscale x
        set xtics auto
        set logscale x 2
        set format x "%g"
        set xlabel sprintf("length 2n + G of the run (n = %d pairs, G distractor pairs)", n0)
        set arrow 2 from 512, 0 to 512, 1.05 nohead dt 2 lc rgb "black"
        do for [panel = 1:2] {
            list = panel == 1 ? ret_own : ret_id
            set title panel == 1 ? "retention past G distractors, own feature map" \
                                 : "retention past G distractors, identity features"
            plot 1 / n0 w l dt 3 lc rgb "black" title "chance 1/n", \
                 for [b in list] ret index int(b) using (2 * $1 + $2):3 w lp lw 2 \
                     pt int(word(points, mof(2, int(b)) + 1)) lc rgb word(colors, mof(2, int(b)) + 1) \
                     title mlabel(mof(2, int(b))), \
                 $claim_ret using 1:2 w p pt 12 ps 2 lw 2 lc rgb "black" title "claim 4"
        }
        unset arrow 2
    }
    unset multiplot
    set output
}
