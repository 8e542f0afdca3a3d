# drift.gp: the inverse drift ||A_t - A_t^ref||_F / ||A_t^ref||_F against t (bin/vla-drift), one
# panel per precision for vla3 with the periodic nudge on and off, and rls on an ill-conditioned
# stream beside them. (Enhanced text: no bare '~', which overprints.) Marks where A_t stops being positive definite and where it turns to NaN.
# Usage: gnuplot -e "dir='data'; out='figures/drift'" plots/drift.gp   (writes OUT.png and OUT.pdf)
# Reads DIR/drift-vla3-PREC-nudge{on,off}.dat for PREC in precs, DIR/drift-rls-{f64,f32}-l{1,1e-6}.dat.

if (!exists("dir")) dir = 'data'
if (!exists("out")) out = 'figures/drift'
if (!exists("precs")) precs = 'f32 f16 bf16 f16-f32 bf16-f32'

set encoding utf8
vla3(p, n) = sprintf('%s/drift-vla3-%s-nudge%s.dat', dir, p, n)
rls(p, l) = sprintf('%s/drift-rls-%s-l%s.dat', dir, p, l)
# the storage format's unit roundoff: the drift one rounding of A already costs
ustore(p) = (p eq 'f64') ? 2**-53 : (p eq 'f32') ? 2**-24 : (p[1:3] eq 'f16') ? 2**-11 : 2**-8
uname(p) = (p eq 'f32') ? 'u = 2^{-24}' : (p[1:3] eq 'f16') ? 'u = 2^{-11}' : 'u = 2^{-8}'

# does a column ever go below zero (lambda_min) or turn NaN (the drift)? Only then a key entry.
negative(f) = system(sprintf("awk '!/^#/ && NF && $6 < 0 {n=1} END {print n+0}' '%s'", f)) + 0
hasnan(f) = system(sprintf("awk '!/^#/ && NF && $2 == \"nan\" {n=1} END {print n+0}' '%s'", f)) + 0

set logscale xy
set format x '10^{%T}'
set format y '10^{%T}'
set grid xtics ytics mxtics lc rgb '#dddddd'
set xlabel 't (tokens)'
set key top left Left reverse samplen 2 spacing 1.1 box opaque width -2

do for [k = 1:2] {
    if (k == 1) {
        set terminal pngcairo size 1650, 1000 font 'Sans,11' enhanced
        set output out.'.png'
        psc = 1
    } else {
        set terminal pdfcairo size 11in, 6.7in font 'Sans,8' enhanced
        set output out.'.pdf'
        psc = 0.6   # cairo draws pdf points and lines larger beside its text
    }
    set style line 1 lc rgb '#1f77b4' lw 2*psc pt 7 ps 0.5*psc
    set style line 2 lc rgb '#ff7f0e' lw 2*psc pt 5 ps 0.5*psc
    set style line 3 lc rgb '#2ca02c' lw 2*psc pt 9 ps 0.6*psc
    set style line 4 lc rgb '#9467bd' lw 2*psc pt 11 ps 0.6*psc
    set style line 8 lc rgb '#d62728' pt 2 ps 1.2*psc lw 2*psc   # lambda_min < 0
    set style line 9 lc rgb 'black' pt 6 ps 1.2*psc lw 1.5*psc   # NaN
    set style line 10 lc rgb '#888888' dt 2 lw 1.5*psc       # unit roundoff
    set multiplot layout 2, 3 title "Inverse drift ||A_t - A_t^{ref}||_F / ||A_t^{ref}||_F (vla3: lmlike, d = 32, reference lib in f64; rls: exact MPFR reference)" font ',13'
    set yrange [1e-9 : 1e3]
    set xrange [1 : *]
    set autoscale xfixmax
    set ylabel 'a\_drift'
    do for [p in precs] {
        off = vla3(p, 'off'); on = vla3(p, 'on')
        neg = negative(off) || negative(on); nn = hasnan(off) || hasnan(on)
        set title sprintf('vla3, %s', p)
        plot off u 1:2 w lp ls 1 t 'nudge off', \
             on u 1:2 w lp ls 2 t 'nudge on (+10^{-3} I every 20 steps)', \
             ustore(p) w l ls 10 t uname(p), \
             off u 1:($6 < 0 ? $2 : NaN) w p ls 8 t (neg ? 'λ_{min}(A_t) < 0' : ''), \
             on u 1:($6 < 0 ? $2 : NaN) w p ls 8 notitle, \
             off u 1:(valid(2) ? NaN : 300) w p ls 9 t (nn ? 'A_t holds NaN (plotted at 300)' : ''), \
             on u 1:(valid(2) ? NaN : 300) w p ls 9 notitle
    }
    set title 'rls, subspace:4,0.001, d = 32'
    set yrange [1e-18 : 1e8]
    neg = negative(rls('f32', '1e-6')) || negative(rls('f32', '1'))
    plot rls('f64', '1') u 1:2 w lp ls 1 t 'f64, λ_0 = 1 (cond ≈ t/4)', \
         rls('f32', '1') u 1:2 w lp ls 2 t 'f32, λ_0 = 1', \
         rls('f64', '1e-6') u 1:2 w lp ls 3 t 'f64, λ_0 = 10^{-6} (cond ≈ 10^7)', \
         rls('f32', '1e-6') u 1:2 w lp ls 4 t 'f32, λ_0 = 10^{-6}', \
         rls('f32', '1e-6') u 1:($6 < 0 ? $2 : NaN) w p ls 8 t (neg ? 'λ_{min}(A_t) < 0' : ''), \
         rls('f32', '1') u 1:($6 < 0 ? $2 : NaN) w p ls 8 notitle
    unset multiplot
    unset output
}
