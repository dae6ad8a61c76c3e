# tests/vm/kprobe.sh: kprobe (perf-tools' tool, ours) on a kernel that has
# kprobes. The truth: the reads workload makes exactly N read(2) calls after
# its "go", the i-th (from 0) of i % 7 + 1 bytes, each reaching vfs_read()
# once; /dev/zero gives every byte asked for.
# vm-static: only: kprobe_register_argument_exact kretprobe_retval kprobe_stacks kprobe_string_fetch_and_filter
# vm-old: also: kprobe_same_events_as_perf_tools

N=997

# (first_function, read_caller, orc_unwinder, SYSCALL_ENTRY: lib.sh)

# The sum of i % 7 + 1 for i = 0 .. N-1.
sizes_sum() { awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) s += i % 7 + 1; print s }'; }

# The sum of the NAME=VALUE fields of the lines of FILE matching REGEX.
field_sum() {
  awk -v re="$2" -v name="$3" '$0 ~ re {
    for (i = 1; i <= NF; i++) if (index($i, name "=") == 1) s += substr($i, length(name) + 2) + 0
  } END { print s + 0 }' "$1"
}

# An argument by register, exact count and values; the address printed as
# the kernel prints it.
case_kprobe_register_argument_exact() {
  start_workload reads $N 7
  traced_run /tmp/kp.out kprobe -p "$WL_PID" 'p:vfs_read count=%dx:u64'
  expect_lines /tmp/kp.out ' vfs_read: \(vfs_read\+0x0/0x[0-9a-f]+\) count=' $N
  local sum
  sum=$(field_sum /tmp/kp.out ' vfs_read: ' count)
  [ "$sum" -eq "$(sizes_sum $N)" ] || fail "count values sum to $sum, expected $(sizes_sum $N)"
  has /tmp/kp.out '^Tracing kprobe vfs_read\. Ctrl-C to end\.$' "perf-tools' header"
  has /tmp/kp.out '^Ending tracing\.\.\.$' "perf-tools' ending"
}

# $argN (Linux 4.20+) and an alias.
case_kprobe_argn_and_alias() {
  start_workload reads 101 7
  traced_run /tmp/kp.out kprobe -p "$WL_PID" 'p:myread vfs_read count=$arg3:u64'
  expect_lines /tmp/kp.out ' myread: \(vfs_read\+0x0/' 101
  [ "$(field_sum /tmp/kp.out ' myread: ' count)" -eq "$(sizes_sum 101)" ] || fail "wrong counts"
}

# A kretprobe with $retval: every read returns the size asked for.
case_kretprobe_retval() {
  start_workload reads $N 7
  traced_run /tmp/kp.out kprobe -p "$WL_PID" 'r:vfs_read ret=$retval:s64'
  expect_lines /tmp/kp.out " vfs_read: \\($(read_caller)\\+0x[0-9a-f]+/0x[0-9a-f]+ <- vfs_read\\) ret=" $N
  [ "$(field_sum /tmp/kp.out ' vfs_read: ' ret)" -eq "$(sizes_sum $N)" ] || fail "wrong return values"
}

# -s: each event followed by its kernel stack.
case_kprobe_stacks() {
  start_workload reads 11
  traced_run /tmp/kp.out kprobe -s -p "$WL_PID" p:vfs_read
  expect_lines /tmp/kp.out ' vfs_read: \(vfs_read\+0x0/' 11
  expect_lines /tmp/kp.out ': <stack trace>$' 11
  if orc_unwinder; then
    has /tmp/kp.out "^ => $(read_caller)\$" "vfs_read's caller in the stacks"
  else
    has /tmp/kp.out "^ => $SYSCALL_ENTRY\$" "the system call entry in the stacks"
  fi
}

# -s at a function's entry: the frame after the probed function is its
# caller, in every stack. The kernel's unwinder (ORC on these kernels) starts
# from the probe's registers, where the return address is at the stack
# pointer; frame-pointer unwinders skip it (kprobe.8). vfs_read's caller is
# ksys_read on 6.1 and 5.10, as their own stacktrace option shows:
# vfs_read, ksys_read, do_syscall_64, entry_SYSCALL_64_after_hwframe.
case_kprobe_stacks_name_the_caller() {
  start_workload reads $N
  traced_run /tmp/kp.out kprobe -s -p "$WL_PID" p:vfs_read
  expect_lines /tmp/kp.out ': <stack trace>$' $N
  local first second
  first=$(awk '/: <stack trace>$/ { getline; print }' /tmp/kp.out | grep -c '^ => vfs_read$')
  second=$(awk '/: <stack trace>$/ { getline; getline; print }' /tmp/kp.out | grep -c '^ => ksys_read$')
  [ "$first" -eq $N ] || fail "$first stacks start with vfs_read, expected $N: $(head -n 12 /tmp/kp.out)"
  [ "$second" -eq $N ] || fail "$second stacks have ksys_read after vfs_read, expected $N: $(head -n 12 /tmp/kp.out)"
}

# A string fetched from user memory: a known file opened a known number of
# times, selected by a filter on the string.
case_kprobe_string_fetch_and_filter() {
  # (Before 5.3 ":string" read user memory; this kernel's reads only kernel
  # memory, so the rewrite of -ustring cannot be checked here.)
  skip_when_forced ustring "ustring rewritten to string reads no user memory on this kernel"
  rm -f /tmp/kp.out /tmp/kp.out.err
  # The file name is the second argument of both: do_sys_openat2 (5.6+)
  # and, before, do_sys_open (perf-tools' one-liner).
  local fn
  fn=$(first_function do_sys_openat2 do_sys_open)
  kprobe "p:$fn file=+0(%si):ustring" 'file == "/etc/hostname"' \
    > /tmp/kp.out 2> /tmp/kp.out.err &
  local tool=$! i
  defer "kill $tool 2>/dev/null"
  wait_for /tmp/kp.out 'Ctrl-C to end'
  for i in 1 2 3 4 5 6 7 8 9 10 11 12 13; do cat /etc/hostname > /dev/null; done
  kill -INT $tool
  wait $tool || fail "kprobe exited with $?: $(cat /tmp/kp.out.err)"
  expect_lines /tmp/kp.out " $fn: .* file=\"/etc/hostname\"" 13
}

# Buffered: the same exact count, read once at the end.
case_kprobe_buffered() {
  start_workload reads $N
  rm -f /tmp/kp.out /tmp/kp.out.err
  kprobe -d 3 -p "$WL_PID" p:vfs_read > /tmp/kp.out 2> /tmp/kp.out.err &
  local tool=$!
  defer "kill $tool 2>/dev/null"
  wait_for /tmp/kp.out '\(buffered\)'
  kill -USR1 "$WL_PID"
  wait_for "$WL_OUT" '^done$'
  wait $tool || fail "kprobe exited with $?: $(cat /tmp/kp.out.err)"
  expect_lines /tmp/kp.out ' vfs_read: \(vfs_read\+0x0/' $N
}

# Refusals: exit 1 with the reason, nothing left in tracefs.
case_kprobe_bad_input() {
  local rc
  kprobe p:no_such_function_zz > /tmp/kp.out 2> /tmp/kp.err && fail "an unknown function was accepted"
  has /tmp/kp.err 'not in available_filter_functions' "the reason"
  rc=0; kprobe -F p:no_such_function_zz > /tmp/kp.out 2> /tmp/kp.err || rc=$?
  [ $rc -eq 1 ] || fail "-F on an unknown function exited $rc: $(cat /tmp/kp.err)"
  has /tmp/kp.err '^kprobe: ' "an error message"
  rc=0; kprobe 'p:vfs_read x=%nosuchreg' > /tmp/kp.out 2> /tmp/kp.err || rc=$?
  [ $rc -eq 1 ] || fail "a bad fetch argument exited $rc"
  has /tmp/kp.err 'nosuchreg|Invalid|error_log' "the kernel's reason"
  rc=0; kprobe p:vfs_read 'no_such_field == 1' > /tmp/kp.out 2> /tmp/kp.err || rc=$?
  [ $rc -eq 1 ] || fail "a bad filter exited $rc"
}

# perf-tools' own kprobe (kprobe-perf, with bash, copied into the image when
# this machine has them) beside ours, on the same reads at the same time:
# the same number of events and the same text after the event's name.
case_kprobe_same_events_as_perf_tools() {
  skip_in_static_image "perf-tools' kprobe is a bash script, and the static image has no libc for bash"
  skip_when_forced instances "without instances both trace at the top level, where perf-tools' lock admits one at a time"
  [ -x /usr/sbin/kprobe-perf ] && [ -x /bin/bash ] ||
    fail "no /usr/sbin/kprobe-perf or /bin/bash in the image (perf-tools-unstable installed?)"
  [ -e /var/tmp/.ftrace-lock ] && fail "perf-tools' lock is held: $(cat /var/tmp/.ftrace-lock)"
  start_workload reads 101 7
  rm -f /tmp/ours.out /tmp/theirs.out
  kprobe -p "$WL_PID" 'p:tk_vfs_read vfs_read count=%dx:u64' > /tmp/ours.out 2> /tmp/ours.err &
  local ours=$! theirs cat_pid i=0
  defer "kill $ours 2>/dev/null"
  wait_for /tmp/ours.out 'Ctrl-C to end'
  /usr/sbin/kprobe-perf -p "$WL_PID" 'p:vfs_read count=%dx:u64' > /tmp/theirs.out 2> /tmp/theirs.err &
  theirs=$!
  defer "kill $theirs 2>/dev/null"
  # It traces once its "cat trace_pipe" runs (its header comes before it
  # enables the probe).
  step "waiting for kprobe-perf's cat trace_pipe"
  cat_pid=$(child_running "$theirs" "cat trace_pipe ") ||
    fail "kprobe-perf never read trace_pipe: $(cat /tmp/theirs.err)"
  kill -USR1 "$WL_PID"
  wait_for "$WL_OUT" '^done$'
  # Both have read everything: 101 events each (30 s at most).
  i=0
  while [ "$(count /tmp/theirs.out ' vfs_read: ')" -lt 101 ] ||
        [ "$(count /tmp/ours.out ' tk_vfs_read: ')" -lt 101 ]; do
    i=$((i + 1)); [ $i -le 300 ] || break
    sleep 0.1
  done
  # SIGTERM to its cat: started in the background by a shell, the script
  # and its cat ignore SIGINT; the script then ends as after a Ctrl-C.
  kill -TERM "$cat_pid"
  wait "$theirs"
  kill -INT "$ours"
  wait "$ours" || fail "kprobe exited with $?: $(cat /tmp/ours.err)"
  expect_lines /tmp/theirs.out ' vfs_read: \(vfs_read\+0x0/0x[0-9a-f]+\) count=' 101
  expect_lines /tmp/ours.out ' tk_vfs_read: \(vfs_read\+0x0/0x[0-9a-f]+\) count=' 101
  sed -n 's/.* vfs_read: //p' /tmp/theirs.out | sort > /tmp/theirs.text
  sed -n 's/.* tk_vfs_read: //p' /tmp/ours.out | sort > /tmp/ours.text
  cmp -s /tmp/ours.text /tmp/theirs.text ||
    fail "different event text: $(diff /tmp/ours.text /tmp/theirs.text | head -n 5)"
  echo "ours:   $(grep -m1 ' tk_vfs_read: ' /tmp/ours.out)"
  echo "theirs: $(grep -m1 ' vfs_read: ' /tmp/theirs.out)"
}
