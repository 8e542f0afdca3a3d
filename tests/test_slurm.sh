#!/bin/bash
# test_slurm.sh: vla-sweep's Slurm job array, run by a real Slurm. Starts a one-node cluster by
# hand under a scratch folder (munged as the munge user; slurmctld and slurmd as root, in the
# foreground, in the background; configuration and state named by SLURM_CONF; loopback ports),
# submits the scripts vla-sweep --slurm writes, unchanged, then stops every daemon by its PID and
# checks that nothing is left. Run by `make test` (make test-slurm alone) from the repository root.
# Skips, saying why, where Slurm cannot start (not root, not installed: make deps installs it);
# VLA_TEST_SLURM=require (.ci/run) makes that a failure. Prints only failures, then the summary.
set -u
repo=$(pwd)
bin=${VLA_BIN_DIR:-bin} # this build's programs (a sanitized build's: build-san/bin)
case $bin in /*) ;; *) bin=$repo/$bin ;; esac
sweep=$bin/vla-sweep
pass=0
fail=0
tmp=
daemons=

ok() { pass=$((pass + 1)); }
bad() {
    fail=$((fail + 1))
    echo "test_slurm: FAIL $*" >&2
}
check() { # check WHAT COMMAND...: the command's status decides
    local what=$1
    shift
    if "$@"; then ok; else bad "$what"; fi
}

# ---- the cluster ----

listening() { # the TCP ports something listens on, in hex
    awk 'NR > 1 && $4 == "0A" { sub(/.*:/, "", $2); print $2 }' /proc/net/tcp /proc/net/tcp6 2>/dev/null
}
port_free() { ! listening | grep -qix "$(printf %04x "$1")"; }
free_port() {
    local p=$1
    until port_free "$p"; do p=$((p + 1)); done
    echo "$p"
}
alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null; }

# Stops what start_cluster started: the jobs, then each daemon by its PID (TERM, KILL after 10 s);
# then no process may be left that carries this cluster's SLURM_CONF (a job's, a slurmstepd), no
# port listening, and the scratch folder goes. Runs once, from finish or on a signal.
stop_cluster() {
    [ -n "$tmp" ] || return 0
    local p i left
    if alive "${ctld_pid:-}"; then
        for p in $(squeue -h -o %A 2>/dev/null); do scancel "$p" 2>/dev/null; done
        for i in $(seq 100); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 0.1; done
    fi
    for p in $daemons; do kill -TERM "$p" 2>/dev/null; done
    for p in $daemons; do
        for i in $(seq 100); do alive "$p" || break; sleep 0.1; done
        if alive "$p"; then
            bad "daemon $p ($(tr '\0' ' ' </proc/"$p"/cmdline)) ignored SIGTERM for 10 s"
            kill -KILL "$p" 2>/dev/null
        fi
        wait "$p" 2>/dev/null
    done
    left=$(unset SLURM_CONF && grep -lszxF "SLURM_CONF=$tmp/slurm.conf" /proc/[0-9]*/environ | cut -d/ -f3)
    for p in $left; do
        bad "left running: $p $(tr '\0' ' ' </proc/"$p"/cmdline 2>/dev/null)"
        kill -KILL "$p" 2>/dev/null
    done
    [ -n "$left" ] || ok
    for p in ${cport:-} ${dport:-}; do check "port $p is free again" port_free "$p"; done
    cd "$repo" && rm -rf "$tmp"
    check "the scratch folder is gone" test ! -e "$tmp"
    left=$(find /etc /var /run /root -xdev -maxdepth 4 \( -iname '*slurm*' -o -iname '*munge*' \) \
        -newermt "@$t0" 2>/dev/null)
    check "nothing of Slurm's or munge's written outside it: $left" test -z "$left"
    tmp=
}
finish() {
    stop_cluster
    echo "test_slurm: $pass passed, $fail failed${version:+ ($version)}"
    [ "$fail" = 0 ]
    exit
}
skip() {
    if [ "${VLA_TEST_SLURM:-}" = require ]; then
        bad "Slurm cannot start: $*"
        finish
    fi
    stop_cluster
    echo "test_slurm: SKIP: Slurm cannot start: $*"
    exit 0
}
trap 'stop_cluster' EXIT
trap 'stop_cluster; exit 1' INT TERM

[ -x "$sweep" ] && [ -x "$bin/vla-statenorm" ] || skip "$bin/vla-sweep or $bin/vla-statenorm not built (run make)"
[ "$(id -u)" = 0 ] || skip "not root (slurmd must start as root)"
for c in munged munge unmunge slurmctld slurmd sbatch squeue scancel scontrol sinfo setpriv; do
    command -v "$c" >/dev/null || skip "no $c (make deps installs slurm-wlm and munge)"
done
id munge >/dev/null 2>&1 && [ -r /etc/munge/munge.key ] || skip "no munge user or /etc/munge/munge.key (make deps)"
version=$(slurmctld -V)
t0=$(($(date +%s) - 1))

tmp=$(mktemp -d "${TMPDIR:-/tmp}/vlaslurm.XXXXXX") || exit 1
chmod 755 "$tmp" # munged wants its socket reachable by everyone, through every folder above it
mkdir "$tmp/munge" "$tmp/state" "$tmp/spool" && chown munge:munge "$tmp/munge" || exit 1
setpriv --reuid=munge --regid=munge --init-groups munged -F --socket="$tmp/munge/socket" \
    --pid-file="$tmp/munge/pid" --log-file="$tmp/munge/log" --seed-file="$tmp/munge/seed" \
    </dev/null >/dev/null 2>"$tmp/munged.err" &
daemons=$!
for i in $(seq 50); do [ -S "$tmp/munge/socket" ] && break; sleep 0.1; done
munge -S "$tmp/munge/socket" -n 2>/dev/null | unmunge -S "$tmp/munge/socket" >/dev/null 2>&1 ||
    skip "munged did not start: $(tail -1 "$tmp/munged.err" 2>/dev/null)"

# the node as slurmd sees it, without RealMemory (memory is not scheduled here, and a node whose
# free memory fell below its configured size would drain)
node=$(slurmd -C | sed -n '1s/ RealMemory=[^ ]*//p')
name=${node#NodeName=}
name=${name%% *}
cport=$(free_port $((20000 + RANDOM % 20000)))
dport=$(free_port $((cport + 1)))
cat >"$tmp/slurm.conf" <<EOF
ClusterName=vlatest
SlurmctldHost=$name(127.0.0.1)
SlurmctldPort=$cport
SlurmdPort=$dport
AuthType=auth/munge
AuthInfo=socket=$tmp/munge/socket
CredType=cred/munge
SlurmUser=root
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
KillWait=5
$node NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$tmp/slurm.conf
slurmctld -D -i </dev/null >"$tmp/slurmctld.out" 2>&1 &
ctld_pid=$!
daemons="$ctld_pid $daemons"
slurmd -D -N "$name" </dev/null >"$tmp/slurmd.out" 2>&1 &
daemons="$! $daemons" # stopped first
for i in $(seq 200); do [ "$(sinfo -h -n "$name" -o %t 2>/dev/null)" = idle ] && break; sleep 0.1; done
[ "$(sinfo -h -n "$name" -o %t 2>/dev/null)" = idle ] ||
    skip "the node is not idle after 20 s: $(tail -2 "$tmp/slurmctld.log" "$tmp/slurmd.log" 2>&1 | tr '\n' ' ')"

# ---- helpers ----

submit() { # sbatch SCRIPT, unchanged; prints the job id
    sbatch --parsable "$1" 2>"$tmp/sbatch.err" | cut -d';' -f1
}
wait_job() { # until the job has left the queue (2 minutes at most)
    for i in $(seq 600); do [ -z "$(squeue -h -j "$1" 2>/dev/null)" ] && return 0; sleep 0.2; done
    return 1
}
states() { # the array tasks' states, sorted, one line: COMPLETED COMPLETED ...
    scontrol -o show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2 | sort | tr '\n' ' '
}
same_table() { # byte for byte but the date
    cmp -s <(grep -v '^# date:' "$1") <(grep -v '^# date:' "$2")
}
stamp() { stat -c '%i %y' "$1" 2>/dev/null; } # inode and mtime (ns): was it rewritten?

work="$tmp/my work (1)" # the job's directory: #SBATCH --chdir and cd, quoted
mkdir "$work" && cd "$work" || exit 1
export OMP_NUM_THREADS=1 # the tables' threads line, the same here and in the array tasks

# ---- 1. a sweep named with blanks and parentheses: the job array's tables are the local run's ----
cat >'my run (1).sweep' <<EOF
program vla-statenorm
fixed --steps 20000 --stream lmlike --d 16
axis --model la vla3
axis --precision f32 f16
EOF
cases="statenorm-la-f32 statenorm-la-f16 statenorm-vla3-f32 statenorm-vla3-f16"
tree='tree (a)'
check "local run" "$sweep" -j 2 --quiet --out "$tree" 'my run (1).sweep' 2>"$tmp/err"
mv "$tree" local
check "vla-sweep --slurm" "$sweep" --slurm --out "$tree" 'my run (1).sweep' >"$tmp/out" 2>&1
check "vla-sweep --slurm says how to submit: $(cat "$tmp/out")" \
    grep -qxF "sbatch 'tree (a)/my run (1).sbatch'" "$tmp/out"
job=$(submit "$tree/my run (1).sbatch")
check "sbatch: $(cat "$tmp/sbatch.err")" test -n "$job"
check "job $job ends" wait_job "$job"
check "4 array tasks completed: $(states "$job")" test "$(states "$job")" = "COMPLETED COMPLETED COMPLETED COMPLETED "
"$sweep" --out "$tree" 'my run (1).sweep' 2>"$tmp/err"
check "collecting exits 0" test $? = 0
check "collecting runs nothing: $(tail -1 "$tmp/err")" grep -q ": 4 cases: 0 ran ok, 4 complete before (skipped), 0 failed, 0 not run" "$tmp/err"
m="$tree/my run (1).manifest.tsv"
check "the manifest says done: $(head -1 "$m")" grep -qxF "# vla-sweep manifest of my run (1).sweep: 4 cases, 4 ok, 0 failed, 0 pending" "$m"
check "the manifest has the array tasks' seconds" test "$(grep -cP '\tok\t[0-9]+\.[0-9]{3}\t' "$m")" = 4
for c in $cases; do
    check "$c.dat: the job array's table is the local run's, byte for byte but the date" \
        same_table "local/$c.dat" "$tree/$c.dat"
done

# ---- 2. one array task killed mid-run (scancel): a resubmission finishes it, losing nothing ----
cat >slow.sweep <<EOF
program vla-statenorm
fixed --steps 150000 --stream lmlike --d 16 --precision f16
resume
axis --model la vla3
EOF
check "local run (slow)" "$sweep" -j 2 --quiet --out slow 'slow.sweep' 2>"$tmp/err"
mv slow slow-local
check "vla-sweep --slurm (slow)" "$sweep" --slurm --out slow slow.sweep >/dev/null 2>&1
export VLA_CHECKPOINT_SECONDS=0.2 # the array tasks too: the kill falls after a checkpoint
job=$(submit slow/slow.sbatch)
for i in $(seq 600); do [ -e slow/statenorm-vla3.dat.ckpt ] && break; sleep 0.05; done # task 1
scancel "${job}_1"
check "job $job ends" wait_job "$job"
check "task 0 completed, task 1 was cancelled: $(states "$job")" test "$(states "$job")" = "CANCELLED COMPLETED "
check "the killed case has no table (killed mid-run)" test ! -e slow/statenorm-vla3.dat
check "the killed case left its checkpoint" test -e slow/statenorm-vla3.dat.ckpt
before=$(stamp slow/statenorm-la.dat)
job=$(submit slow/slow.sbatch)
check "job $job (the same script again) ends" wait_job "$job"
check "both tasks completed: $(states "$job")" test "$(states "$job")" = "COMPLETED COMPLETED "
check "the finished case was not run again" test -n "$before" -a "$(stamp slow/statenorm-la.dat)" = "$before"
check "the killed case resumed from its checkpoint: $(grep -o -- '--resume' slow/statenorm-vla3.dat | head -1)" \
    grep -q "^# command: .* --resume$" slow/statenorm-vla3.dat
check "its checkpoints are gone" test ! -e slow/statenorm-vla3.dat.ckpt
check "the resumed table has the numbers of a run never killed" \
    cmp -s <(grep -v '^# date:' slow-local/statenorm-vla3.dat | sed '/^# command:/s/$/ --resume/') \
    <(grep -v '^# date:' slow/statenorm-vla3.dat)
check "the other table is the local run's" same_table slow-local/statenorm-la.dat slow/statenorm-la.dat
"$sweep" --out slow slow.sweep 2>"$tmp/err"
check "collecting the killed sweep: $(tail -1 "$tmp/err")" grep -q ": 2 cases: 0 ran ok, 2 complete before" "$tmp/err"

# ---- 3. hostile names: only the cases run ----
hostile='x$(touch canary1)`touch canary2`'"'"'q"%b' # $(...), backticks, quotes, a % (sbatch's)
out="o\$(touch $tmp/canary3)\`touch $tmp/canary4\`;touch canary5"
printf 'program vla-statenorm\nfixed --steps 2000 --stream lmlike --d 8\naxis --model la vla3\n' >"$hostile.sweep"
check "vla-sweep --slurm, hostile names" "$sweep" --slurm --out "$out" "$hostile.sweep" >/dev/null 2>"$tmp/err"
job=$(submit "$out/$hostile.sbatch")
check "sbatch (hostile): $(cat "$tmp/sbatch.err")" test -n "$job"
check "job $job ends" wait_job "$job"
check "both tasks completed: $(states "$job")" test "$(states "$job")" = "COMPLETED COMPLETED "
check "the cases' tables" test -s "$out/statenorm-la.dat" -a -s "$out/statenorm-vla3.dat"
check "the log went where --output says: $(ls "$out/slurm")" test -e "$out/slurm/$hostile-${job}_0.log"
# a line break cannot be quoted in an #SBATCH line: refused, nothing written
"$sweep" --slurm --out "nl
touch $tmp/canary6" "$hostile.sweep" >/dev/null 2>"$tmp/err"
check "a line break in --out: exit 2" test $? = 2
check "a line break in --out: said: $(cat "$tmp/err")" grep -q "line break" "$tmp/err"
check "a line break in --out: nothing written" test ! -e "nl
touch $tmp/canary6"
check "no injected command ran: $(find "$tmp" -name 'canary[0-9]')" test -z "$(find "$tmp" -name 'canary[0-9]')"

cd "$repo"
finish
