# tests/vm/funcslower.sh: funcslower, function_graph with tracing_thresh.
# The truth: the sleeps workload makes exactly N nanosleep(2) calls of 20 ms
# after its go; each spends its 20 ms (and a little more) in
# hrtimer_nanosleep(), and prints each call's wall time (an upper bound of
# the kernel's).
# vm-static: skip: the same tracefs text as functrace, which the static image runs: nothing here depends on the C library

N=5

# Over 10 ms: exactly the N sleeps, each "} /* hrtimer_nanosleep */" with
# a duration of 20 ms or more.
case_funcslower_exact() {
  start_workload sleeps $N 20
  traced_run /tmp/fs.out funcslower -p "$WL_PID" hrtimer_nanosleep 10000
  has /tmp/fs.out '^Tracing "hrtimer_nanosleep" for PID [0-9]+ slower than 10000 us\.\.\. Ctrl-C to end\.$' "the header"
  expect_lines /tmp/fs.out '^ [0-9]+\) .* (2[0-9]|[3-9][0-9])[0-9][0-9][0-9]\.[0-9]+ us +\|  \} /\* hrtimer_nanosleep \*/$' $N
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
  buffered_run /tmp/fs.out funcslower -C -d 2 -p "$WL_PID" hrtimer_nanosleep 10000
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

# perf-tools' funcslower on one run, ours on another: the same N calls.
case_funcslower_same_as_perf_tools() {
  skip_in_static_image "perf-tools' funcslower is a bash script, and the static image has no libc for bash"
  [ -x /usr/sbin/funcslower-perf ] && [ -x /bin/bash ] ||
    fail "no /usr/sbin/funcslower-perf or /bin/bash in the image (perf-tools-unstable installed?)"
  [ -e /var/tmp/.ftrace-lock ] && fail "perf-tools' lock is held: $(cat /var/tmp/.ftrace-lock)"
  start_workload sleeps $N 20
  local theirs
  rm -f /tmp/theirs.out
  /usr/sbin/funcslower-perf -p "$WL_PID" -d 2 hrtimer_nanosleep 10000 > /tmp/theirs.out 2> /tmp/theirs.err &
  theirs=$!
  defer "kill $theirs 2>/dev/null"
  child_running "$theirs" "sleep 2 " > /dev/null || fail "funcslower-perf never slept: $(cat /tmp/theirs.err)"
  kill -USR1 "$WL_PID"
  wait_for "$WL_OUT" '^done$'
  wait "$theirs" || fail "funcslower-perf exited with $?: $(cat /tmp/theirs.err)"
  expect_lines /tmp/theirs.out '\|  \} /\* hrtimer_nanosleep \*/$' $N
  start_workload sleeps $N 20
  buffered_run /tmp/ours.out funcslower -p "$WL_PID" -d 2 hrtimer_nanosleep 10000
  expect_lines /tmp/ours.out '\|  \} /\* hrtimer_nanosleep \*/$' $N
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
  buffered_run /tmp/fs.out funcslower -d 2 -p "$WL_PID" hrtimer_nanosleep 10000
  expect_lines /tmp/fs.out '\} /\* hrtimer_nanosleep \*/' $N
  [ -e /var/tmp/.ftrace-lock ] && fail "the lock is left: $(cat /var/tmp/.ftrace-lock)"
  return 0
}
