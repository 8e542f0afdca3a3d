# tables.gp: readers of vla-* tables for the plot scripts (loaded by style.gp, and alone by the
# scripts with a style of their own), so that a figure takes its titles, ranges and labels from
# the table it draws: a header line's value, a constant of the '# config:' line, the horizon.
# the tables: docs/math.md section 9 ('#' headers, whitespace columns, blocks one per run)
have(f) = system("[ -r '" . f . "' ] && echo 1 || echo 0") + 0
# over the runs (blocks) at each t, column c: "t mean min max" of its finite values
band(f, c) = sprintf("< awk '!/^#/ && NF && $%d !~ /nan|inf/ { v = $%d + 0; t = $1 + 0; s[t] += v; n[t]++; if (!(t in lo) || v < lo[t]) lo[t] = v; if (!(t in hi) || v > hi[t]) hi[t] = v } END { for (t in s) print t, s[t] / n[t], lo[t], hi[t] }' '%s' | sort -g", c, c, f)
# the end of each run's curve of column c, one row per run: "t y nan" with nan = 1 where the run
# turned non-finite (t: its first non-finite checkpoint, y: its last finite value)
ends(f, c) = sprintf("< awk 'function out() { if (seen) print (bad ? tb : t), y, bad + 0; seen = bad = 0 } !/^#/ && NF { if (bad) next; if ($%d ~ /nan|inf/) { if (seen) { bad = 1; tb = $1 } next } t = $1; y = $%d; seen = 1; next } !/^#/ && !NF { out() } END { out() }' '%s'", c, c, f)
# ... only the runs that turned non-finite (a labels plot whose points are all NaN crashes gnuplot 5.4)
nanends(f, c) = ends(f, c) . " | awk '$3 > 0'"
# the last row of a table (of its last run), all its columns
lastrow(f) = sprintf("< awk '!/^#/ && NF { l = $0 } END { print l }' '%s'", f)
# the first checkpoint of each run where column c < 0 (lambda_min): "t y" with y from column cy
firstneg(f, c, cy) = sprintf("< awk '!/^#/ && NF && !done && $%d + 0 < 0 && $%d !~ /nan/ { print $1, $%d; done = 1 } !/^#/ && !NF { done = 0 }' '%s'", c, c, cy, f)
# a 'KEY: value' header line's value, and one NAME=VALUE of the '# config:' line
header(f, key) = system(sprintf("sed -n 's/^# %s: //p' '%s' | head -1", key, f))
config(f, name) = system(sprintf("sed -n 's/^# config:.*[ ]%s=\\([^ ]*\\).*/\\1/p' '%s' | head -1", name, f))
# the largest t of a table
tmax(f) = real(system(sprintf("awk '!/^#/ && NF && $1 + 0 > m { m = $1 + 0 } END { print m + 0 }' '%s'", f)))
# the smallest t of a table
tmin(f) = real(system(sprintf("awk '!/^#/ && NF && (m == \"\" || $1 + 0 < m) { m = $1 + 0 } END { print m + 0 }' '%s'", f)))
# a stream for a title: a trace by its last two folders (trace:a/b/c/ -> c's parent/c)
stream_name(f) = system(sprintf("sed -n 's|^# stream: ||p' '%s' | head -1 | sed 's|/*$||; s|^trace:.*/\\([^/]*/[^/]*\\)$|trace \\1|'", f))
