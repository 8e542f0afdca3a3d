# safegate.gp: the safe-gate map of the chunk forms' gate bound (docs/forms.md, "The exponent range
# of the chunk forms"): kda and gdn with every log-gate pinned at the bound lb (gate_map=pin), base
# 2, one panel per anchor (rows) and precision policy (columns); x: lb; y: the chunk size C, each
# row split in kda (upper half) and gdn (lower half). A cell is black where the read-out o at a
# checkpoint (the last token of a chunk) is non-finite (pinned gates make every chunk alike: the
# first checkpoint, t = 128), orange where o stays finite but its error against the exact sequential
# recurrence passes 1e-2 at a checkpoint (a silent failure), blank where neither. The closed form
# |lb| = ln(largest finite number) / span (88.72 / span in binary32 and bfloat16's range, 11.09 /
# span in binary16's), span the largest exponent (in steps) an anchored factor reaches: dashed, the
# span of the chunk's last token (what the table reads: first with blocks of 16: 15; mid with blocks
# of 16: 7; mid over the chunk: C / 2 - 1); dotted, the chunk's largest (docs/forms.md: 15, 8, C /
# 2, reached by a block's first token, which the table does not read). Direct differences have none.
# Usage: gnuplot -e "dir='data'; out='figures/safegate'" plots/safegate.gp
#   reads DIR/safegate-MODEL-ANCHOR-lbX.dat (bin/vla-forms --what sweep: t C prec s_relerr
#   a_relerr o_relerr); writes OUT.pdf/png and OUT-1col.pdf/png
if (!exists("out")) out = 'figures/safegate'
load system("dirname '" . ARG0 . "'") . '/style.gp'

ANCHORS = "direct first16 mid16 mid"
KPRECS = "f32 bf16-kern f16-kern"
anchor_title(a) = a eq 'direct' ? 'direct' : a eq 'first16' ? 'first, blocks of 16' : \
                  a eq 'mid16' ? 'mid, blocks of 16' : 'mid, one per chunk'
do for [a in ANCHORS] {
    do for [m in "gdn kda"] {
        if (system(sprintf("ls '%s'/safegate-%s-%s-lb*.dat 2>/dev/null | wc -l", dir, m, a)) + 0 == 0) {
            print sprintf('safegate.gp: missing %s/safegate-%s-%s-lb*.dat (make figures writes them)', dir, m, a)
            exit status 1
        }
    }
}
# each (model, C) of precision p and anchor a: "lb row status" with row the C's index (1..4)
# shifted up for kda and down for gdn, status 2 non-finite at the first checkpoint, 1 finite with
# o's error past 1e-2 at some checkpoint, 0 neither
cells(a, p) = sprintf("< awk 'FNR == 1 { lb = \"\"; m = \"\" } /^# model: / { m = $3 } /^# config:/ { for (i = 3; i <= NF; i++) if ($i ~ /^gate_lb=/) lb = substr($i, 9) + 0 } !/^#/ && NF && $3 == \"%s\" { k = lb \" \" m \" \" $2; if (!(k in s)) s[k] = ($6 ~ /nan|inf/) ? 2 : 0; else if ($6 ~ /nan|inf/ && s[k] < 2) s[k] = 2; if (s[k] == 0 && $6 + 0 > 1e-2) s[k] = 1 } END { for (k in s) { split(k, w, \" \"); r = log(w[3] / 8) / log(2); print w[1], r + (w[2] == \"kda\" ? 0.22 : -0.22), s[k] } }' '%s'/safegate-gdn-%s-lb*.dat '%s'/safegate-kda-%s-lb*.dat", p, dir, a, dir, a)
# the span of the last token's factors (last = 1) and the chunk's largest (last = 0)
span(a, C, last) = a eq 'first16' ? 15 : a eq 'mid16' ? 8 - last : a eq 'mid' ? C / 2 - last : 0
lnmax(p) = p eq 'f16-kern' ? log(65504.0) : 128 * log(2)
HALF = 0.125   # half the lb grid's step
NONFIN = '#222222'
SILENT = '#E69F00'
BOUND = '#0072B2'

do for [cols in SIZES] {
    c = cols + 0
    eval begin(c, c == 2 ? 6.2 : 6.0)
    G_rows = 4; G_cols = 3
    if (c == 2) {
        G_left = 0.07; G_right = 0.99; G_bottom = 0.07; G_top = 0.9; G_hsp = 0.04; G_vsp = 0.07
    } else {
        G_left = 0.12; G_right = 0.98; G_bottom = 0.07; G_top = 0.855; G_hsp = 0.03; G_vsp = 0.062
    }
    eval keyarea(c == 2 ? 3 : 2)
    plot NaN w boxes fs solid 1 lc rgb NONFIN t 'o non-finite', \
         NaN w boxes fs solid 1 lc rgb SILENT t 'finite, error of o > 10^{-2}', \
         NaN w l lw 1.5 dt 2 lc rgb BOUND t 'ln(max) / span, last token', \
         NaN w l lw 1.5 dt 3 lc rgb '#CC79A7' t 'ln(max) / span, whole chunk', \
         NaN w l lw 0 lc rgb '#ffffff' t 'each C: kda above, gdn below'
    eval keydone
    unset logscale
    unset grid
    set xrange [-12.125 : -0.125]
    set yrange [0.5 : 4.5]
    set xtics -12, (c == 2 ? 2 : 4), 0 format '%g'
    set mxtics 2
    set border 15
    unset x2tics
    unset y2tics
    set tics in nomirror
    set style fill solid 1 noborder
    i = 0
    do for [a in ANCHORS] {
        do for [p in KPRECS] {
            i = i + 1
            eval panel(i)
            set title sprintf('%s, %s', a eq 'direct' ? 'direct' : a eq 'first16' ? 'first/16' : a eq 'mid16' ? 'mid/16' : 'mid/C', p) offset 0, -0.4
            set xlabel (i == 11 ? 'gate lower bound {/:Italic lb}' : '') offset 0, 0.5
            set ylabel ((i - 1) % 3 == 0 ? '{/:Italic C}' : '') offset 1.5, 0
            set format x (i > 9 ? '%g' : '')
            if ((i - 1) % 3 == 0) {
                set ytics ('16' 1, '32' 2, '64' 3, '128' 4)
            } else {
                set ytics ('' 1, '' 2, '' 3, '' 4)
            }
            unset arrow
            if (span(a, 16, 0) > 0) {
                do for [r = 1 : 4] {
                    b = lnmax(p) / span(a, 2 ** (r + 3), 1)
                    if (b < 12.125) {
                        set arrow from -b, r - 0.5 to -b, r + 0.5 nohead lw 1.5 dt 2 lc rgb BOUND front
                    }
                    b = lnmax(p) / span(a, 2 ** (r + 3), 0)
                    if (b < 12.125) {
                        set arrow from -b, r - 0.5 to -b, r + 0.5 nohead lw 1.5 dt 3 lc rgb '#CC79A7' front
                    }
                }
            }
            plot cells(a, p) u ($3 == 2 ? $1 : 1/0):2:($1 - HALF):($1 + HALF):($2 - 0.2):($2 + 0.2) w boxxy lc rgb NONFIN notitle, \
                 cells(a, p) u ($3 == 1 ? $1 : 1/0):2:($1 - HALF):($1 + HALF):($2 - 0.2):($2 + 0.2) w boxxy lc rgb SILENT notitle, \
                 for [r = 1 : 3] r + 0.5 w l lc rgb '#999999' lw 0.5 notitle
        }
    }
    eval finish(c)
}
