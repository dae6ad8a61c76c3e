# tests/vm/kernel.sh: the guest kernel has what the kprobe and function
# tracer tools need (and the build machines' kernel lacks). These cases use
# tracefs directly, not our tools: when one fails, the tier itself is broken
# (wrong kernel, missing config), not a tool.
# vm-static: skip: the guest kernel's own features, the same under either image

# read(2)s a file in a process named dd (busybox cat uses sendfile, which
# does not go through vfs_read).
read_file() { dd if=/etc/passwd of=/dev/null bs=64 2>/dev/null; }

# A kprobe on an exported syscall path and a kretprobe, seen in the trace.
case_kprobe_events() {
  [ -e "$T/kprobe_events" ] || fail "no $T/kprobe_events (CONFIG_KPROBE_EVENTS)"
  tfs_append kprobe_events 'p:tracekit_vm/openat do_sys_openat2 dfd=%di'
  defer "echo '-:tracekit_vm/openat' >> $T/kprobe_events"
  tfs_append kprobe_events 'r:tracekit_vm/openat_ret do_sys_openat2 ret=$retval'
  defer "echo '-:tracekit_vm/openat_ret' >> $T/kprobe_events"
  defer "echo > $T/trace"
  tfs_write events/tracekit_vm/enable 1
  defer "echo 0 > $T/events/tracekit_vm/enable"
  # (busybox's sh may run the cat applet in a forked shell without exec:
  # the task is then named sh, so match any task.)
  cat /etc/passwd > /dev/null
  tfs_write events/tracekit_vm/enable 0
  has "$T/trace" '-[0-9]+ .* openat: \(do_sys_openat2\+0x0/' "kprobe hit by cat"
  has "$T/trace" '-[0-9]+ .* openat_ret: .* ret=' "kretprobe hit by cat"
}

# The perf kprobe PMU (perf_event_open of a kprobe without tracefs).
case_kprobe_pmu() {
  local d=/sys/bus/event_source/devices/kprobe
  [ -r $d/type ] || fail "no $d (perf kprobe PMU)"
  grep -Eq '^[0-9]+$' $d/type || fail "$d/type: $(cat $d/type)"
  [ -e $d/format/retprobe ] || fail "no $d/format/retprobe"
}

# The function tracer, filtered to one function.
case_function_tracer() {
  has "$T/available_tracers" '(^| )function( |$)' "tracer 'function' available"
  grep -qx vfs_read "$T/available_filter_functions" ||
    fail "vfs_read not in available_filter_functions"
  defer "echo > $T/trace"
  defer "echo > $T/set_ftrace_filter"
  defer "echo nop > $T/current_tracer; echo 1 > $T/tracing_on"
  tfs_write set_ftrace_filter vfs_read
  tfs_write current_tracer function
  read_file
  tfs_write tracing_on 0   # changing the tracer would clear the buffer
  has "$T/trace" 'dd-[0-9]+ .* vfs_read <-ksys_read' "vfs_read called by dd"
}

# function_graph, limited to one function's call graph.
case_function_graph() {
  has "$T/available_tracers" '(^| )function_graph( |$)' "tracer 'function_graph' available"
  defer "echo > $T/trace"
  defer "echo > $T/set_graph_function"
  defer "echo nop > $T/current_tracer; echo 1 > $T/tracing_on"
  tfs_write set_graph_function vfs_read
  tfs_write current_tracer function_graph
  read_file
  tfs_write tracing_on 0
  has "$T/trace" 'vfs_read\(\) \{' "a vfs_read() { graph entry"
  has "$T/trace" '^ *[0-9]+\)' "per-CPU graph lines"
}

# The stacktrace trigger, on a kprobe event and on a syscall tracepoint
# (stackcount's and stacksnoop's kernel stacks).
case_stacktrace_trigger() {
  tfs_append kprobe_events 'p:tracekit_vm/vfs_read vfs_read'
  defer "echo '-:tracekit_vm/vfs_read' >> $T/kprobe_events"
  local ev=events/tracekit_vm/vfs_read sc=events/syscalls/sys_enter_getppid
  defer "echo > $T/trace"
  tfs_append $ev/trigger 'stacktrace if common_pid > 1'
  defer "echo '!stacktrace if common_pid > 1' >> $T/$ev/trigger"
  tfs_append $sc/trigger 'stacktrace'
  defer "echo '!stacktrace' >> $T/$sc/trigger"
  tfs_write $ev/enable 1
  defer "echo 0 > $T/$ev/enable"
  tfs_write $sc/enable 1
  defer "echo 0 > $T/$sc/enable"
  read_file
  syscalls 0.05 > /dev/null
  tfs_write $ev/enable 0
  tfs_write $sc/enable 0
  has "$T/trace" '<stack trace>' "a <stack trace> record"
  has "$T/trace" '^ => ksys_read' "vfs_read's caller ksys_read in a stack"
  has "$T/trace" '^ => do_syscall_64' "do_syscall_64 in a stack"
  has "$T/trace" 'syscalls-[0-9]+ .* sys_getppid\(\)' "sys_enter_getppid events"
}

# The function tracer's stacktrace command (set_ftrace_filter
# FUNC:stacktrace: the kernel-function fallback without kprobes).
case_function_stacktrace() {
  defer "echo > $T/trace"
  defer "echo > $T/set_ftrace_filter"
  defer "echo '!vfs_read:stacktrace' >> $T/set_ftrace_filter"
  defer "echo nop > $T/current_tracer; echo 1 > $T/tracing_on"
  tfs_write set_ftrace_filter vfs_read
  tfs_append set_ftrace_filter 'vfs_read:stacktrace'
  has "$T/set_ftrace_filter" '^vfs_read:stacktrace:unlimited' "the stacktrace command listed"
  tfs_write current_tracer function
  read_file
  tfs_write tracing_on 0
  has "$T/trace" '<stack trace>' "a <stack trace> record"
  has "$T/trace" '^ => ksys_read' "ksys_read in a stack"
  [ -e "$T/options/func_stack_trace" ] || fail "no options/func_stack_trace"
}

# Hist triggers: counts per pid and per kernel stack, in the kernel. They
# are optional (CONFIG_HIST_TRIGGERS: on in bookworm's 6.1, off in
# bullseye's 5.10); without them the kernel must neither list nor accept
# them, and nothing may be left behind.
case_hist_trigger() {
  local sc=events/syscalls/sys_enter_getppid
  if ! kconfig CONFIG_HIST_TRIGGERS; then
    echo "CONFIG_HIST_TRIGGERS is off in $(uname -r): checking that hist is refused"
    if grep -qw 'hist' "$T/$sc/trigger"; then
      fail "'hist' among the available triggers although CONFIG_HIST_TRIGGERS is off"
    fi
    [ ! -e "$T/$sc/hist" ] || fail "$T/$sc/hist exists although CONFIG_HIST_TRIGGERS is off"
    defer "echo '!hist:keys=common_pid' >> $T/$sc/trigger 2>/dev/null"
    if printf 'hist:keys=common_pid\n' 2>/dev/null >> "$T/$sc/trigger"; then
      fail "the kernel accepted a hist trigger although CONFIG_HIST_TRIGGERS is off"
    fi
    return 0
  fi
  grep -q 'hist' "$T/$sc/trigger" || fail "'hist' not among the available triggers"
  tfs_append $sc/trigger 'hist:keys=common_pid'
  defer "echo '!hist:keys=common_pid' >> $T/$sc/trigger"
  tfs_append $sc/trigger 'hist:keys=stacktrace'
  defer "echo '!hist:keys=stacktrace' >> $T/$sc/trigger"
  syscalls 0.05 > /tmp/hist.wl
  local pid
  pid=$(sed -n 's/^ready //p' /tmp/hist.wl)
  cat "$T/$sc/hist" > /tmp/hist
  has /tmp/hist "\{ common_pid: +$pid \} hitcount: +[1-9]" "a hitcount for the workload's pid $pid"
  has /tmp/hist '\{ stacktrace:' "a stacktrace key"
  has /tmp/hist '^ +do_syscall_64\+0x' "do_syscall_64 in a stacktrace key"
}
