# make-rules.awk: the rules of make figures from a sweep's case list (bin/vla-sweep --dry-run --out
# data FILE: "case TAB status TAB command" lines), so that make and vla-sweep make the same tables
# with the same commands. Each case becomes $(DATA)/CASE.dat, made by its command with --out $@;
# table_prog (in the Makefile) says how a table depends on its program. A case of an alone section
# (a timing) is also listed in SWEEP_ALONE, which make figures runs one at a time, after the rest.
BEGIN { FS = "\t" }
/^#/ || NF != 3 { next }
{
    n = split($3, w, " ")
    if (n < 3 || w[n - 1] != "--out" || w[n] != "data/" $1 ".dat") {
        printf "make-rules.awk: case %s: the command does not end in --out data/%s.dat\n", $1, $1 > "/dev/stderr"
        exit 1
    }
    cmd = substr($3, 1, length($3) - length(w[n]) - 7)
    gsub(/\$/, "$$", cmd)
    printf "SWEEP_TABLES += $(DATA)/%s.dat\n", $1
    if ($2 ~ / alone$/)
        printf "SWEEP_ALONE += $(DATA)/%s.dat\n", $1
    printf "$(DATA)/%s.dat: $(call table_prog,%s,%s)\n", $1, $1, w[1]
    printf "\t@mkdir -p $(@D)\n\t%s --out $@\n", cmd
}
