# tests/vm/stackcount.sh: stackcount and stacksnoop on kernel functions, on a
# kernel that has kprobes and the function tracer (the build machines' kernel
# has neither). The truth: the reads workload makes exactly 997 read(2)
# calls, each reaching vfs_read() once, after its "go".
# vm-static: only: kprobe_kernel_stacks_exact kprobe_user_and_kernel_stacks function_tracer_fallback_exact stacksnoop_function_tracer_live stacksnoop_kprobe_buffered_exact

N=997

# (first_function, read_caller, orc_unwinder, SYSCALL_ENTRY: lib.sh)

# The sum of stackcount's counts (lines of 4 spaces and a number).
counted() { awk '/^    [0-9]+$/ { n += $1 } END { print n + 0 }' "$1"; }

expect_count() {
  local got
  got=$(counted "$1")
  [ "$got" -eq "$2" ] || { cat "$1"; fail "counted $got events, expected $2"; }
}

# Kernel stacks from a kprobe with a stacktrace trigger, read raw.
case_kprobe_kernel_stacks_exact() {
  start_workload reads $N
  traced_run /tmp/sc.out stackcount -K -p "$WL_PID" vfs_read
  expect_count /tmp/sc.out $N
  local first caller
  caller=$(read_caller)
  first=$(awk '/^$/ { top = 1; next } top && /^  [^ ]/ { print $1; top = 0 }' /tmp/sc.out | sort -u)
  [ "$first" = vfs_read ] || { cat /tmp/sc.out; fail "first frames: $first, expected vfs_read only"; }
  if orc_unwinder; then
    has /tmp/sc.out "^  $caller\$" "$caller below vfs_read"
  else
    has /tmp/sc.out "^  $SYSCALL_ENTRY\$" "the system call entry below vfs_read"
  fi
}

# At a function's entry the frame after it is its caller (the kernel's ORC
# unwinder starts from the kprobe's registers): every stack counted is
# vfs_read then ksys_read (what these kernels' own stacktrace option shows,
# see kprobe.sh), through the kprobe's trigger (the ftrace backend) and
# through perf (the kprobe PMU's callchain).
case_kprobe_stacks_name_the_caller() {
  local how caller
  caller=$(read_caller)
  for how in ftrace perf; do
    start_workload reads $N
    traced_run /tmp/sc.out stackcount --backend $how -K -p "$WL_PID" vfs_read
    expect_count /tmp/sc.out $N
    # The counts of the stacks whose first two frames are vfs_read, ksys_read.
    local with
    with=$(awk -v c="$caller" '/^  [^ ]/ { f[++n] = $1; next }
                /^    [0-9]+$/ { if (f[1] == "vfs_read" && f[2] == c) s += $1; n = 0 }
                END { print s + 0 }' /tmp/sc.out)
    [ "$with" -eq $N ] || { cat /tmp/sc.out; fail "stackcount $how: $with of $N stacks are vfs_read, $caller"; }
  done
}

# The default: kernel and user stacks from perf on the kprobe's event.
case_kprobe_user_and_kernel_stacks() {
  start_workload reads $N
  traced_run /tmp/sc.out stackcount -d -p "$WL_PID" vfs_read
  expect_count /tmp/sc.out $N
  has /tmp/sc.out '^  do_reads$' "the user function do_reads"
  has /tmp/sc.out '^    --$' "the kernel/user delimiter"
  has /tmp/sc.out '^  vfs_read$' "vfs_read"
  if orc_unwinder; then
    has /tmp/sc.out "^  $(read_caller)\$" "vfs_read's caller"
  else
    has /tmp/sc.out "^  $SYSCALL_ENTRY\$" "the system call entry"
  fi
}

# Function returns: a kretprobe.
case_kretprobe_exact() {
  start_workload reads $N
  traced_run /tmp/sc.out stackcount -K -p "$WL_PID" r::vfs_read
  expect_count /tmp/sc.out $N
}

# Without kprobes (forced), kernel functions go to the function tracer with
# func_stack_trace, in the run's own instance.
case_function_tracer_fallback_exact() {
  start_workload reads $N
  # A glob: set_ftrace_filter takes one name per write(2), the rest is
  # written again (a single write of several names failed with EIO).
  traced_run /tmp/sc.out env TRACEKIT_KERNEL_FEATURES=-kprobes stackcount -K -p "$WL_PID" 'vfs_rea*'
  expect_count /tmp/sc.out $N
  has /tmp/sc.out "^  $(read_caller)\$" "vfs_read's caller in the function tracer's stacks"
}

# Globs expand against available_filter_functions.
case_glob_traces_several_functions() {
  start_workload reads 5
  traced_run /tmp/sc.out stackcount -K -p "$WL_PID" 'vfs_rea*'
  has /tmp/sc.out '^Tracing [2-9][0-9]* functions for "vfs_rea\*"' "several functions traced"
  [ "$(counted /tmp/sc.out)" -ge 5 ] || fail "fewer than 5 events: $(cat /tmp/sc.out)"
}

# stacksnoop, buffered: every call's stack, printed once at the end.
case_stacksnoop_kprobe_buffered_exact() {
  start_workload reads $N
  rm -f /tmp/ss.out /tmp/ss.err   # (see traced_run)
  stacksnoop -d 4 -p "$WL_PID" vfs_read > /tmp/ss.out 2> /tmp/ss.err &
  local tool=$!
  wait_for /tmp/ss.out '\(buffered\)'
  kill -USR1 "$WL_PID"
  wait "$tool" || fail "stacksnoop exited with $?: $(tail -n 3 /tmp/ss.err)"
  local n
  n=$(count /tmp/ss.out ' ip: [0-9a-f]+ vfs_read')
  [ "$n" -eq $N ] || fail "$n stacks with ip: vfs_read, expected $N: $(head -n 20 /tmp/ss.out)"
}

# stacksnoop live, through the function tracer.
case_stacksnoop_function_tracer_live() {
  start_workload reads 7
  traced_run /tmp/ss.out env TRACEKIT_KERNEL_FEATURES=-kprobes stacksnoop -v -p "$WL_PID" vfs_read
  local n
  n=$(count /tmp/ss.out ' ip: ')
  [ "$n" -eq 7 ] || fail "$n stacks, expected 7: $(head -n 30 /tmp/ss.out)"
  has /tmp/ss.out ' reads +[0-9]+ +[0-9] +ip: ' "the COMM PID CPU columns"
}

# stacksnoop, buffered, through the function tracer, under overflow (issue
# 38): the drops count ring records (the function tracer writes an event's
# stack on its own: a refused event costs two), and the warning counts
# events: those printed and those lost add up to the calls exactly.
case_stacksnoop_function_tracer_lost_events_exact() {
  local n=400000
  start_workload reads $n
  rm -f /tmp/ss.out /tmp/ss.err   # (see traced_run)
  TRACEKIT_KERNEL_FEATURES=-kprobes stacksnoop -d 120 -p "$WL_PID" vfs_read \
    > /tmp/ss.out 2> /tmp/ss.err &
  local tool=$!
  wait_for /tmp/ss.out '\(buffered\)'
  kill -USR1 "$WL_PID"
  wait_for "$WL_OUT" '^done'
  kill -INT "$tool"
  wait "$tool" || fail "stacksnoop exited with $?: $(tail -n 3 /tmp/ss.err)"
  local printed lost
  printed=$(awk 'NF == 1 && $1 ~ /^[0-9]/' /tmp/ss.out | wc -l)
  lost=$(sed -n 's/^WARNING: \([0-9]*\) events lost.*/\1/p' /tmp/ss.err)
  [ -n "$lost" ] || fail "nothing lost: the buffer should have overflowed: $(cat /tmp/ss.err)"
  [ $((printed + lost)) -eq $n ] || fail "$printed printed + $lost lost, expected $n: $(cat /tmp/ss.err)"
}
