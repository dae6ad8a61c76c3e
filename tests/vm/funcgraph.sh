# tests/vm/funcgraph.sh: funcgraph, function_graph on set_graph_function.
# The truth: the reads workload makes exactly N read(2) calls after its go,
# each of which calls vfs_read() once, and vfs_read() calls
# rw_verify_area() (and read_zero(), for /dev/zero) below it.
# function_graph is allowed in an instance only from Linux 6.12: on these
# kernels funcgraph traces at the top level, under perf-tools' lock.
# vm-static: only: funcgraph_depth_exact funcgraph_all_info_and_tails funcgraph_reset_tracing
# vm-old: also: funcgraph_same_as_perf_tools

N=97

# has_graph_option NAME: function_graph has options/NAME here. Before Linux
# 4.2 a tracer's own options are in options/ only while it is current (3.10:
# none of funcgraph-* otherwise), so there it is made current for a look.
has_graph_option() {
  [ -e $T/options/funcgraph-proc ] && { [ -e $T/options/$1 ]; return; }
  [ "$(cat $T/current_tracer)" = nop ] || fail "current_tracer is $(cat $T/current_tracer)"
  local r=1
  echo function_graph > $T/current_tracer || fail "cannot switch to function_graph"
  [ -e $T/options/$1 ] && r=0
  echo nop > $T/current_tracer
  return $r
}

# -m 2 -L: exactly N graphs "vfs_read() {" with their children one level
# down and the closing "}", durations in the kernel's column.
case_funcgraph_depth_exact() {
  start_workload reads $N
  traced_run /tmp/fg.out funcgraph -m 2 -L "$WL_PID" vfs_read
  has /tmp/fg.out '^Tracing "vfs_read" for TID [0-9]+\.\.\. Ctrl-C to end\.$' "the header"
  expect_lines /tmp/fg.out '^ [0-9]+\) +\|  vfs_read\(\) \{$' $N
  has /tmp/fg.out '^ [0-9]+\) .*[0-9.]+ us +\|    rw_verify_area\(\);$' "a child at depth 2 with its duration"
  [ "$(count /tmp/fg.out '^ [0-9]+\) .*\|      [a-z_]')" -eq 0 ] || fail "a call deeper than -m 2"
  # Each graph closes at depth 1: counted once per graph (from its
  # "vfs_read() {" to the next). An interrupt's graph may start again at
  # depth 1 (4.14: "smp_irq_work_interrupt() {" ... "}" inside vfs_read,
  # 98 closing braces for 97 calls in 3 runs of 3; its markers are not
  # always both printed on 3.10), nested on 5.10 and 6.1. The kernel names
  # the function after the brace ("} /* vfs_read */") when the entry it
  # closes is not the last it printed at that depth on that CPU (an
  # interrupt or a migration came between): 96 of 97 plain braces once in
  # 5.10 (CI, 2 of about 8 runs).
  local closed
  closed=$(awk '/\|  vfs_read\(\) \{$/ { open = 1; done = 0; next }
                /^ [0-9]+\) .*[0-9.]+ us +\|  \}( \/\* [a-z_]+ \*\/)?$/ { if (open && !done) { done = 1; n++ } }
                END { print n + 0 }' /tmp/fg.out)
  [ "$closed" -eq $N ] || { cat /tmp/fg.out; fail "$closed graphs of $N closed at depth 1"; }
  [ "$(count /tmp/fg.out '^#')" -eq 0 ] || fail "header lines without -H"
}

# -a (-H -P -t) and -T: the header, the process column, absolute
# timestamps, and each closing brace commented with its function. (-C too:
# reads do not sleep, so it changes no duration here; the runner checks
# that sleep-time is restored, funcslower's case what it does.)
# Where function_graph has no funcgraph-tail (3.10): -T is refused, naming
# it, and the rest runs without it.
case_funcgraph_all_info_and_tails() {
  local tail=-T
  if ! has_graph_option funcgraph-tail; then
    step "no funcgraph-tail: -T refused"
    rm -f /tmp/fg.refused
    funcgraph -T -d 1 vfs_read > /tmp/fg.refused 2>&1 && fail "funcgraph -T ran without funcgraph-tail"
    has /tmp/fg.refused '^funcgraph: cannot set -T \(funcgraph-tail\): .*function_graph tracer has no funcgraph-tail option' "the refusal"
    tail=
  fi
  start_workload reads $N
  traced_run /tmp/fg.out funcgraph -a -C $tail -m 2 -p "$WL_PID" vfs_read
  has /tmp/fg.out '^# tracer: function_graph$' "the trace file's header (-H)"
  has /tmp/fg.out '^# +TIME +CPU +TASK/PID' "the time and task columns in the header"
  expect_lines /tmp/fg.out "^ *[0-9]+\.[0-9]+ \| +[0-9]+\) +(reads|<\.\.\.>)-$WL_PID +\| .*\|  vfs_read\(\) \{$" $N
  if [ -n "$tail" ]; then
    expect_lines /tmp/fg.out '\|  \} /\* vfs_read \*/$' $N
  else
    expect_lines /tmp/fg.out '\|  \}( /\* vfs_read \*/)?$' $N
  fi
}

# perf-tools' funcgraph on one run of the workload, ours (buffered, -d) on
# another (both need the top level here), with -D -P -T -m 2: the same
# graphs of vfs_read, line for line once PIDs and CPUs are left aside (the
# process column, no duration column: -D), with the same calls in them.
# Only the workload's own path is compared: interrupts differ by run, and a
# call whose return comes after a context switch prints as "f() {" and "}"
# where it would have been "f();" (one comparison of the whole text failed
# in 8 runs on 5.10).
case_funcgraph_same_as_perf_tools() {
  skip_in_static_image "perf-tools' funcgraph is a bash script, and the static image has no libc for bash"
  [ -x /usr/sbin/funcgraph-perf ] && [ -x /bin/bash ] ||
    fail "no /usr/sbin/funcgraph-perf or /bin/bash in the image (perf-tools-unstable installed?)"
  [ -e /var/tmp/.ftrace-lock ] && fail "perf-tools' lock is held: $(cat /var/tmp/.ftrace-lock)"
  start_workload reads $N
  local first=$WL_PID theirs f
  rm -f /tmp/theirs.out
  /usr/sbin/funcgraph-perf -D -P -T -m 2 -p "$first" -d 3 vfs_read > /tmp/theirs.out 2> /tmp/theirs.err &
  theirs=$!
  defer "kill $theirs 2>/dev/null"
  step "waiting for funcgraph-perf's sleep"
  child_running "$theirs" "sleep 3 " > /dev/null || fail "funcgraph-perf never slept: $(cat /tmp/theirs.err)"
  kill -USR1 "$first"
  wait_for "$WL_OUT" '^done$'
  wait "$theirs" || fail "funcgraph-perf exited with $?: $(cat /tmp/theirs.err)"
  start_workload reads $N
  buffered_run /tmp/ours.out funcgraph -D -P -T -m 2 -p "$WL_PID" -d 3 vfs_read
  for f in theirs ours; do
    expect_lines /tmp/$f.out '^ [0-9]+\) +(reads|<\.\.\.>)-[0-9]+ +\| vfs_read\(\) \{$' $N
    expect_lines /tmp/$f.out '^ [0-9]+\) +(reads|<\.\.\.>)-[0-9]+ +\| \} /\* vfs_read \*/$' $N
    grep -E '^ [0-9]+\) ' /tmp/$f.out | grep -v '=>' |
      sed -n -E 's/.*\| +(vfs_read|rw_verify_area|read_zero)\(\)( \{|;)$/\1/p' | sort | uniq -c > /tmp/$f.text
  done
  cmp -s /tmp/ours.text /tmp/theirs.text ||
    fail "different calls: $(diff /tmp/ours.text /tmp/theirs.text | head -n 12 | tr "\n" " ")"
  [ "$(count /tmp/ours.out ' us +\|')" -eq 0 ] || fail "a duration under -D"
  cat /tmp/ours.text
  echo "side by side (perf-tools' | ours), the first graphs:"
  grep -E '^ [0-9]+\) ' /tmp/theirs.out | head -n 12 > /tmp/theirs.head
  grep -E '^ [0-9]+\) ' /tmp/ours.out | head -n 12 > /tmp/ours.head
  paste -d '#' /tmp/theirs.head /tmp/ours.head | sed 's/#/   #   /'
}

# What a killed funcgraph leaves at the top level (function_graph current,
# funcgraph-proc on, max_graph_depth set): reset-tracing -f resets the
# option while function_graph is still current (3.10 shows funcgraph-*
# only then, and keeps their values for the tracer's next use), then the
# tracer and the depth.
case_funcgraph_reset_tracing() {
  [ -e /var/tmp/.ftrace-lock ] && fail "perf-tools' lock is held: $(cat /var/tmp/.ftrace-lock)"
  [ "$(cat $T/current_tracer)" = nop ] || fail "current_tracer is $(cat $T/current_tracer)"
  defer "echo nop > $T/current_tracer; echo 0 > $T/max_graph_depth"
  tfs_write current_tracer function_graph
  tfs_write trace_options funcgraph-proc
  tfs_write max_graph_depth 3
  reset-tracing -f > /tmp/rt.out 2>&1 || fail "reset-tracing -f exited with $?: $(cat /tmp/rt.out)"
  has /tmp/rt.out '^reset options/funcgraph-proc: 1 -> 0$' "the option's reset"
  has /tmp/rt.out '^reset current_tracer: function_graph -> nop$' "the tracer's reset"
  has /tmp/rt.out '^reset max_graph_depth: 3 -> 0$' "the depth's reset"
  [ "$(grep -n 'funcgraph-proc' /tmp/rt.out | cut -d: -f1)" -lt "$(grep -n 'current_tracer' /tmp/rt.out | cut -d: -f1)" ] ||
    fail "the tracer was reset before its option: $(cat /tmp/rt.out)"
  # Where a tracer's options show only while it is current, it is made
  # current again to look (switching costs seconds under TCG elsewhere).
  if [ -e $T/options/funcgraph-proc ]; then
    [ "$(cat $T/options/funcgraph-proc)" = 0 ] || fail "funcgraph-proc is still on"
  else
    tfs_write current_tracer function_graph
    [ "$(cat $T/options/funcgraph-proc)" = 0 ] || fail "funcgraph-proc is still on for function_graph's next use"
    tfs_write current_tracer nop
  fi
}
