# tests/vm/funcslower.sh: funcslower, function_graph with tracing_thresh.
# The truth: the sleeps workload makes exactly N nanosleep(2) calls of 20 ms
# after its go; each spends its 20 ms (and a little more) in
# hrtimer_nanosleep(), and prints each call's wall time (an upper bound of
# the kernel's).
# vm-static: only: funcslower_exact funcslower_on_cpu_only funcslower_lock funcslower_no_lock_directory
# vm-old: also: funcslower_same_as_perf_tools

N=5

# Whether funcslower can take -p here: function_graph under tracing_thresh
# reads set_ftrace_pid only where it is a pid list of each trace array (in
# every instance: Linux 4.6; function-fork came in 4.13). Before, it is a
# flag on the tasks that the threshold path does not read (3.10 and 4.4
# printed the harness's 100 ms sleeps too), and funcslower refuses -p.
pid_under_thresh() {
  [ -e $T/options/function-fork ] && return 0
  local d=$T/instances/tk_funcslower_probe_$$ r=1
  mkdir $d 2> /dev/null || return 1
  [ -e $d/set_ftrace_pid ] && r=0
  rmdir $d
  return $r
}

# slower_run HOW OUT ARGS...: funcslower ARGS... on the workload, with -p
# where the kernel keeps it, else -P (every task's calls, each line naming
# its task; funcslower's -p refusal checked first): OUT then holds the
# workload's own lines (and the header and end lines).
slower_run() {
  local how=$1 out=$2
  shift 2
  if pid_under_thresh; then
    ${how}_run "$out" funcslower -p "$WL_PID" "$@"
    return
  fi
  step "no pid list under tracing_thresh: -p refused, -P and the workload's lines instead"
  rm -f /tmp/fs.refused
  funcslower -p "$WL_PID" "$@" > /tmp/fs.refused 2>&1 && fail "funcslower -p ran where the kernel ignores it"
  has /tmp/fs.refused '^funcslower: cannot trace -p under tracing_thresh here: .*\(.*Linux 4\.6.*\)$' "the refusal"
  ${how}_run "$out.all" funcslower -P "$@"
  grep -Ev '^ [0-9]+\) ' "$out.all" > "$out"
  grep -E "^ [0-9]+\) +(sleeps|<\.\.\.>)-$WL_PID +\|" "$out.all" >> "$out"
}

N=5

# Over 10 ms: exactly the N sleeps, each "} /* hrtimer_nanosleep */" with
# a duration of 20 ms or more.
# (Without -p where the kernel cannot: slower_run.) A loaded machine may
# stretch a sleep past 100 ms ("@ 167854.3 us" once on 4.19).
case_funcslower_exact() {
  start_workload sleeps $N 20
  slower_run traced /tmp/fs.out hrtimer_nanosleep 10000
  has /tmp/fs.out '^Tracing "hrtimer_nanosleep"( for PID [0-9]+)? slower than 10000 us\.\.\. Ctrl-C to end\.$' "the header"
  expect_lines /tmp/fs.out '^ [0-9]+\) .* (2[0-9]|[3-9][0-9]|[1-9][0-9][0-9]+)[0-9][0-9][0-9]\.[0-9]+ us +\|  \} /\* hrtimer_nanosleep \*/$' $N
}

# Over 50 ms: none of them (unless a sleep took that long: the workload's
# wall times say).
case_funcslower_none_over_threshold() {
  start_workload sleeps $N 20
  buffered_run /tmp/fs.out funcslower -d 2 -p "$WL_PID" hrtimer_nanosleep 50000
  has /tmp/fs.out '^Tracing "hrtimer_nanosleep" for PID [0-9]+ slower than 50000 us for 2 seconds\.\.\.$' "the header"
  local over
  over=$(sed -n 's/^slept //p' "$WL_OUT" | tr ' ' '\n' | awk '$1 >= 50000' | wc -l)
  expect_lines /tmp/fs.out '\} /\* hrtimer_nanosleep \*/' "$over"
}

# -C: on-CPU time only (nosleep-time): a sleep's 20 ms are not its
# duration any more, so none is over 10 ms.
case_funcslower_on_cpu_only() {
  start_workload sleeps $N 20
  slower_run buffered /tmp/fs.out -C -d 2 hrtimer_nanosleep 10000
  expect_lines /tmp/fs.out '\} /\* hrtimer_nanosleep \*/' 0
}

# -a (-H -P -t): the header, the process column (and no context-switch
# markers: perf-tools' funcslower leaves them out), times; -L: one thread.
case_funcslower_all_info() {
  start_workload sleeps $N 20
  traced_run /tmp/fs.out funcslower -a -L "$WL_PID" hrtimer_nanosleep 10000
  has /tmp/fs.out '^# tracer: function_graph$' "the trace file's header (-H)"
  expect_lines /tmp/fs.out "^ *[0-9]+\.[0-9]+ \| +[0-9]+\) +(sleeps|<\.\.\.>)-$WL_PID +\| .* us +\|  \} /\* hrtimer_nanosleep \*/$" $N
  [ "$(count /tmp/fs.out '^ ---|=>')" -eq 0 ] || fail "context-switch markers under -P"
}

# perf-tools' funcslower on one run, ours on another: the same N calls,
# the same text after the duration. Where the kernel ignores -p under
# tracing_thresh (pid_under_thresh), perf-tools' -p would print other
# tasks' sleeps too and ours refuses it: both trace every task with -P, and
# the workload's lines are compared.
case_funcslower_same_as_perf_tools() {
  skip_in_static_image "perf-tools' funcslower is a bash script, and the static image has no libc for bash"
  [ -x /usr/sbin/funcslower-perf ] && [ -x /bin/bash ] ||
    fail "no /usr/sbin/funcslower-perf or /bin/bash in the image (perf-tools-unstable installed?)"
  [ -e /var/tmp/.ftrace-lock ] && fail "perf-tools' lock is held: $(cat /var/tmp/.ftrace-lock)"
  local theirs who f pid
  pid_under_thresh && who=-p || who=-P
  start_workload sleeps $N 20
  local first=$WL_PID
  rm -f /tmp/theirs.out
  if [ $who = -p ]; then
    /usr/sbin/funcslower-perf -p "$WL_PID" -d 2 hrtimer_nanosleep 10000 > /tmp/theirs.out 2> /tmp/theirs.err &
    theirs=$!
    defer "kill $theirs 2>/dev/null"
    child_running "$theirs" "sleep 2 " > /dev/null || fail "funcslower-perf never slept: $(cat /tmp/theirs.err)"
    kill -USR1 "$WL_PID"
    wait_for "$WL_OUT" '^done$'
  else
    # Streaming: perf-tools' -P -d passes its awk program unevaluated
    # ("$cat trace", word-split: awk reads '"/(^' as its program) and prints
    # nothing; its streaming path evals it. Ended by a TERM to its reader.
    /usr/sbin/funcslower-perf -P hrtimer_nanosleep 10000 > /tmp/theirs.out 2> /tmp/theirs.err &
    theirs=$!
    defer "kill $theirs 2>/dev/null"
    local reader="" i=0 d ppid x
    step "waiting for funcslower-perf's trace_pipe reader"
    while [ -z "$reader" ]; do
      for d in /proc/[0-9]*; do
        read -r x x x ppid x 2> /dev/null < "$d/stat" || continue
        [ "$ppid" = "$theirs" ] && grep -q trace_pipe "$d/cmdline" 2> /dev/null && reader=${d#/proc/}
      done
      i=$((i + 1)); [ $i -le 300 ] || fail "funcslower-perf never read trace_pipe: $(cat /tmp/theirs.err)"
      [ -n "$reader" ] || sleep 0.1
    done
    kill -USR1 "$WL_PID"
    wait_for "$WL_OUT" '^done$'
    i=0
    while [ "$(grep -Ec "(sleeps|<\.\.\.>)-$first +\|.*\} /\* hrtimer_nanosleep" /tmp/theirs.out)" -lt $N ]; do
      i=$((i + 1)); [ $i -le 100 ] || break
      sleep 0.1
    done
    kill -TERM "$reader"
  fi
  wait "$theirs" || [ $who = -P ] || fail "funcslower-perf exited with $?: $(cat /tmp/theirs.err)"
  [ -e /var/tmp/.ftrace-lock ] && fail "funcslower-perf left its lock"
  start_workload sleeps $N 20
  if [ $who = -p ]; then
    buffered_run /tmp/ours.out funcslower -p "$WL_PID" -d 2 hrtimer_nanosleep 10000
  else
    buffered_run /tmp/ours.out funcslower -P -d 2 hrtimer_nanosleep 10000
  fi
  for f in theirs ours; do
    [ $f = theirs ] && pid=$first || pid=$WL_PID
    if [ $who = -p ]; then
      grep -E '^ [0-9]+\) ' /tmp/$f.out > /tmp/$f.lines
    else
      grep -E "^ [0-9]+\) +(sleeps|<\.\.\.>)-$pid +\|" /tmp/$f.out > /tmp/$f.lines
    fi
    expect_lines /tmp/$f.lines '\|  \} /\* hrtimer_nanosleep \*/$' $N
    # The text after the duration column, and the duration's form.
    sed -E 's/.* ([0-9.]+ us +\|.*)/\1/; s/^[0-9.]+ us/D us/' /tmp/$f.lines | sort | uniq -c > /tmp/$f.text
  done
  cmp -s /tmp/ours.text /tmp/theirs.text ||
    fail "different lines: $(diff /tmp/ours.text /tmp/theirs.text | head -n 8 | tr "\n" " ")"
  echo "side by side (perf-tools' | ours), $who:"
  paste -d '#' /tmp/theirs.lines /tmp/ours.lines | sed 's/#/   #   /'
}

# The lock (function_graph and tracing_thresh are the top level's here):
# a live holder's makes funcslower refuse, naming its PID, and changes
# nothing; reset-tracing -f removes it; a dead holder's is taken over (and
# removed at the end).
case_funcslower_lock() {
  skip_when_forced instances "the same path: the top level either way here"
  [ -e /var/tmp/.ftrace-lock ] && fail "perf-tools' lock is held: $(cat /var/tmp/.ftrace-lock)"
  start_workload sleeps $N 20
  defer "rm -f /var/tmp/.ftrace-lock"
  echo "$WL_PID" > /var/tmp/.ftrace-lock
  rm -f /tmp/fs.out
  funcslower -d 1 hrtimer_nanosleep 10000 > /tmp/fs.out 2>&1 &&
    fail "funcslower ran while PID $WL_PID held the lock"
  has /tmp/fs.out "^funcslower: .*in use by PID $WL_PID" "the refusal naming the holder"
  [ "$(cat /var/tmp/.ftrace-lock)" = "$WL_PID" ] || fail "the holder's lock was changed"
  reset-tracing -f > /tmp/rt.out 2>&1 || fail "reset-tracing -f exited with $?: $(cat /tmp/rt.out)"
  [ -e /var/tmp/.ftrace-lock ] && fail "reset-tracing -f left the lock: $(cat /tmp/rt.out)"
  # A dead holder: a PID no process has.
  sh -c 'exit 0' & local dead=$!
  wait $dead
  echo "$dead" > /var/tmp/.ftrace-lock
  if pid_under_thresh; then
    buffered_run /tmp/fs.out funcslower -d 2 -p "$WL_PID" hrtimer_nanosleep 10000
  else
    # (-p refused before the lock is looked at: slower_run checks that.)
    buffered_run /tmp/fs.out.all funcslower -P -d 2 hrtimer_nanosleep 10000
    grep -E "(sleeps|<\.\.\.>)-$WL_PID +\|" /tmp/fs.out.all > /tmp/fs.out
  fi
  expect_lines /tmp/fs.out '\} /\* hrtimer_nanosleep \*/' $N
  [ -e /var/tmp/.ftrace-lock ] && fail "the lock is left: $(cat /var/tmp/.ftrace-lock)"
  return 0
}

# No /var/tmp (a first-contact user's minimal root has /var alone): the
# lock's directory is made as the system has it (mode 1777, root's), said
# on stderr, and the run goes on; /var/tmp is put back as it was after.
case_funcslower_no_lock_directory() {
  [ -e /var/tmp/.ftrace-lock ] && fail "perf-tools' lock is held: $(cat /var/tmp/.ftrace-lock)"
  [ -d /var/tmp ] && [ ! -L /var/tmp ] || fail "no /var/tmp directory in the guest to start with"
  local mode
  mode=$(stat -c %a /var/tmp)
  mkdir -p /tmp/var-tmp.saved
  cp -a /var/tmp/. /tmp/var-tmp.saved/
  defer "rm -rf /var/tmp; mkdir -p /var/tmp; chmod $mode /var/tmp; cp -a /tmp/var-tmp.saved/. /var/tmp/; rm -rf /tmp/var-tmp.saved"
  rm -rf /var/tmp
  [ "$(stat -c %u%a /var)" = 0755 ] || fail "/var is not root's 755 here: $(ls -ld /var)"
  start_workload sleeps $N 20
  buffered_run /tmp/fs.out funcslower -P -d 2 hrtimer_nanosleep 10000
  has /tmp/fs.out.err '^funcslower: made /var/tmp \(mode 1777, as the system has it\) for the ftrace lock$' "the note"
  [ "$(stat -c %u%a /var/tmp)" = 01777 ] || fail "/var/tmp made as $(ls -ld /var/tmp)"
  [ -e /var/tmp/.ftrace-lock ] && fail "the lock is left"
  [ "$(grep -Ec "(sleeps|<\.\.\.>)-$WL_PID +\|.*\} /\* hrtimer_nanosleep \*/" /tmp/fs.out)" -eq $N ] ||
    { cat /tmp/fs.out; fail "not $N of the workload's sleeps"; }
}
