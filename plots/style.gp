# style.gp: what every figure of plots/ shares, loaded by each script first: the two sizes (a
# double-column figure 7 in wide and a single-column one 3.4 in wide, text 8 pt at print size), one
# colour per model, precision and way of tracking A (Okabe-Ito, safe for colour-blind readers),
# the marks of a curve's end, and readers of vla-* tables. A figure is written as PDF by cairo and
# rasterized from that PDF at 150 dpi for the PNG (pdftoppm), so both are the same picture.
# A script sets `dir` (the tables), `out` (the figure's path without extension) and `shared`.

if (!exists("dir")) dir = 'data'
if (!exists("shared")) shared = '../shared'
set encoding utf8
FONT = 'DejaVu Sans'
FS = 8          # pt at print size: labels, ticks, keys (cairo's PDF draws a font at 4/3 of its
                # size: fontscale 0.75 makes it 8 pt, as pdftotext -bbox measures)
DPI = 150
W2 = 7.0        # in: a double-column (full text width) figure
W1 = 3.4        # in: a single-column figure
# the sizes a script draws: NAME.pdf/png at W2, NAME-1col.pdf/png at W1
SIZES = "2 1"
width(cols) = cols == 2 ? W2 : W1
outname(cols) = out . (cols == 2 ? '' : '-1col')
begin(cols, h) = sprintf("set terminal pdfcairo size %.2fin,%.2fin font '%s,%d' fontscale 0.75 linewidth 1 rounded enhanced; set output '%s.pdf'", width(cols), h, FONT, FS, outname(cols))
finish(cols) = sprintf("unset multiplot; unset output; system \"pdftoppm -r %d -png -singlefile '%s.pdf' '%s'\"", DPI, outname(cols), outname(cols))

# the panels: a figure is a grid of G_rows x G_cols panels between G_left .. G_right and
# G_bottom .. G_top (fractions of the figure), G_hsp and G_vsp apart; `eval panel(i)` places panel i
# (row by row from the top left). The key of the whole figure sits above the grid, across the full
# width: `eval keyarea(N)` (at most N entries a row), then a plot of its entries only, then
# `eval keydone`.
G_hsp = 0.06
G_vsp = 0.1
pw(i) = (G_right - G_left - (G_cols - 1) * G_hsp) / G_cols
ph(i) = (G_top - G_bottom - (G_rows - 1) * G_vsp) / G_rows
panel(i) = sprintf("set lmargin at screen %.4f; set rmargin at screen %.4f; set tmargin at screen %.4f; set bmargin at screen %.4f", \
    G_left + ((i - 1) % G_cols) * (pw(i) + G_hsp), G_left + ((i - 1) % G_cols) * (pw(i) + G_hsp) + pw(i), \
    G_top - int((i - 1) / G_cols) * (ph(i) + G_vsp), G_top - int((i - 1) / G_cols) * (ph(i) + G_vsp) - ph(i))
keyarea(n) = sprintf("set multiplot; set lmargin at screen 0.005; set rmargin at screen 0.995; set tmargin at screen 0.998; set bmargin at screen 0.99; unset border; unset tics; unset xlabel; unset ylabel; unset title; unset grid; unset logscale; set xrange [0:1]; set yrange [0:1]; set key at screen 0.5, screen 0.998 center top horizontal Left reverse maxcols %d maxrows 10 samplen 2", n)
keydone = "unset key; set autoscale xy; set border 3; set xtics; set ytics; set tics out nomirror scale 0.6, 0.3; set grid xtics ytics back ls 100, ls 100"

# colours: each model, precision and way of tracking A keeps its colour in every figure
okabe = "#000000 #E69F00 #56B4E9 #009E73 #F0E442 #0072B2 #D55E00 #CC79A7"
MODELS = "la delta rls vla1 vla3"
model_color(m) = m eq 'la' ? '#D55E00' : m eq 'delta' ? '#E69F00' : m eq 'rls' ? '#009E73' : \
                 m eq 'vla1' ? '#CC79A7' : m eq 'vla3' ? '#0072B2' : '#000000'
PRECS = "f32 f16 bf16 f16-f32 bf16-f32"
prec_color(p) = p eq 'f64' ? '#000000' : p eq 'f32' ? '#0072B2' : p eq 'f16' ? '#D55E00' : \
                p eq 'bf16' ? '#CC79A7' : p eq 'f16-f32' ? '#E69F00' : p eq 'bf16-f32' ? '#009E73' : '#777777'
TRACKS = "sm sm-sym joseph chol comp sr"
track_color(t) = t eq 'sm' ? '#0072B2' : t eq 'sm-sym' ? '#56B4E9' : t eq 'joseph' ? '#000000' : \
                 t eq 'chol' ? '#009E73' : t eq 'comp' ? '#D55E00' : t eq 'sr' ? '#E69F00' : '#777777'
GRID = '#e4e4e4'
REF = '#666666'  # reference lines (unit roundoff, 1, the golden ratio)

# the marks at the end of a curve: a filled dot where it ends finite, a cross at the first
# checkpoint where it is NaN or Inf (drawn at its last finite value, since NaN has no place on
# an axis), and an open triangle at the first checkpoint where lambda_min(A_t) < 0
PT_END = 7
PT_NAN = 2
PT_NEG = 8
PS = 0.55

set style line 100 lc rgb GRID lw 1
set grid xtics ytics back ls 100, ls 100
set border lw 1.2
set tics scale 0.6, 0.3 nomirror
set tics out
set border 3
# the keys: no automatic titles, an opaque box; `eval keystyle` restores it after a panel's own
keystyle = "set key default; set key noautotitle samplen 1.6 spacing 1.05 width -1 opaque box lc rgb '#bbbbbb' lw 0.6"
eval keystyle

# ---- reading tables: plots/tables.gp (the forms' scripts load it alone)
load system("dirname '" . ARG0 . "'") . '/tables.gp'
# powers of ten for tick labels
set format x '10^{%T}'
