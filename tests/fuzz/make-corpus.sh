#!/bin/bash
# Writes the seed corpora of the text parsers' fuzz targets into
# tests/fuzz/corpus/<name>/ from what this machine has: /proc/kallsyms
# slices, /proc/mounts, `ldconfig -p`, the CPU lists in sysfs, tracefs format
# files (tracefs is mounted for the copy and unmounted after when it was not
# mounted), the ftrace fixtures, and the specs, patterns, trigger and probe
# lines the unit tests use. Root for kallsyms addresses and tracefs.
# The binary corpora (perf records, rings, side-band streams, formats with
# raw records) come from make-perf-corpus.cpp (make fuzz-corpus runs both).
#   tests/fuzz/make-corpus.sh
set -eu
cd "$(dirname "$0")/../.."
c=tests/fuzz/corpus

seed() {  # seed NAME FILE: stdin into corpus/NAME/FILE
  mkdir -p "$c/$1"
  cat >"$c/$1/$2"
}

# --- strings: numbers, id lists, CPU lists
for f in online possible present offline; do
  [ -r /sys/devices/system/cpu/$f ] && seed strings "cpu_$f" </sys/devices/system/cpu/$f
done
printf '0-3,5\n' | seed strings cpu_ranges
printf '0,2-7,16-31,63\n' | seed strings cpu_many
printf '185,186' | seed strings id_list
printf '1, 2 ,3' | seed strings id_list_spaces
printf '%s' 18446744073709551615 | seed strings u64_max
printf '%s' -2147483648 | seed strings int_min
printf '0xffffffff816d5370' | seed strings hex
printf 'a,,b\n c \t' | seed strings split_trim

# --- spec: the forms of probe/spec.hpp and its test's bad ones
i=0
for s in vfs_read 'tcp_send*' p::vfs_read ::vfs_read :vfs_read r::vfs_read \
  t:sched:sched_switch 't:sched*:*' 't:*:sys_enter_get*' c:malloc p:c:malloc \
  pthread:pthread_mutex_lock /bin/bash:readline './test:read*' r:c:malloc \
  r:/bin/bash:readline 'u:node:gc*' u:/usr/bin/python3:function__entry \
  u:node:node:gc__start t:sched t:sched: x:foo:bar kprobe:foo:bar c: p:: r:c: :: \
  u:node u::gc u:node: u:a:b:c:d p:a:b:c t:a:b:c 'vfs_*' '^vfs_(read|write)$'; do
  i=$((i + 1))
  printf '%s' "$s" | seed spec "spec_$i"
done

# --- match: flags byte (1 = regex), pattern, NUL, name
i=0
while read -r flag pat name; do
  i=$((i + 1))
  { printf "\\x$flag"; printf '%s\0%s' "$pat" "$name"; } | seed match "match_$i"
done <<'EOF'
00 vfs_* vfs_read
00 tcp_send* tcp_sendmsg
00 *[rw]*_iter ext4_file_read_iter
00 sys_enter_get? sys_enter_getppid
00 [!_]* __x64_sys_getppid
00 \* *
01 ^vfs_(read|write)$ vfs_read
01 tcp_.*msg tcp_recvmsg
01 ^__x64_sys_get(p?pid|tid)$ __x64_sys_getppid
01 [[:alpha:]]+_[0-9]{2,} ext4_12
01 (a|ab)*c aababababc
01 ^(?:do_)?sys_open(at2?)?$ do_sys_openat2
01 \bkmalloc\b __kmalloc
01 x{1,3}y.*?z xxyabz
EOF

# --- kallsyms and kernel_functions: slices of /proc/kallsyms around what the
# parsers treat specially (text start and end, init text, irq entry text,
# modules, bpf, __pfx_ labels, .cold parts), plus the ftrace fixture.
ks=$(mktemp)
cat /proc/kallsyms >"$ks"
slice() {  # slice NAME PATTERN LINES: LINES lines from the first match
  local n
  n=$(grep -n -m1 -E "$2" "$ks" | cut -d: -f1) || return 0
  [ -n "$n" ] || return 0
  tail -n +"$n" "$ks" | head -n "$3" >"$ks.slice"
  seed kallsyms "$1" <"$ks.slice"
  seed kernel_functions "$1" <"$ks.slice"
}
slice head '' 40
slice stext ' T _stext$' 30
slice etext ' [Tt] _etext$' 20
slice sinittext ' [Tt] _sinittext$' 30
slice einittext ' [Tt] _einittext$' 20
slice irqentry ' [Tt] __irqentry_text_start$' 20
slice pfx ' t __pfx_' 30
slice cold '\.cold' 20
slice vfs_read ' T vfs_read$' 30
slice module '\[[a-z0-9_]+\]$' 40
slice bpf '\[bpf\]$' 20
slice builtin '\[__builtin__' 20
tail -n 40 "$ks" | seed kallsyms tail_end
rm -f "$ks" "$ks.slice"
seed kallsyms fixture <tests/fixtures/ftrace/kallsyms
# available_filter_functions' shape, from the same names (the real file is
# often unreadable: EPERM under lockdown).
awk '$2 ~ /^[tT]$/ { print $3 (NF > 3 ? " " $4 : "") }' "$c/kallsyms/module" "$c/kallsyms/vfs_read" |
  seed kernel_functions filter_functions
printf 'vfs_read\n__ftrace_invalid_address___123\nfoo [mod]\n\n' | seed kernel_functions filter_invalid

# --- perf_map: what JITs write (V8: no 0x; others 0x; Java signatures with spaces)
printf '3a0c2e04000 1c LazyCompile:~main /tmp/a.js:1\n3a0c2e04040 80 Builtin:ArgumentsAdaptorTrampoline\n' |
  seed perf_map v8
printf '0x7f3b6c000a00 0x40 void java.lang.Thread.run()\n0x7f3b6c000a40 0x100 int Foo.bar(java.lang.String, int)\n' |
  seed perf_map java
printf '1000 100 outer\n1040 10 inner\n1000 20 reused\n' | seed perf_map overlap
printf 'ffffffffffffff00 ff top\nffffffffffffff00 100 wraps\n0 0 zero\nbad line\n' | seed perf_map edges

# --- ldconfig: name, NUL, `ldconfig -p` text
ld=$(ldconfig -p 2>/dev/null || true)
{ printf 'c\0'; printf '%s\n' "$ld" | grep -E 'libc\.so|libm\.so|libpthread' ; } | seed ldconfig libc
{ printf 'pthread\0'; printf '%s\n' "$ld" | head -n 30; } | seed ldconfig head
{ printf 'z\0'; printf '%s\n' "$ld" | grep -E 'libz\.' ; } | seed ldconfig libz
{ printf 'c\0'; printf '\tlibc.so.6 (libc6, OS ABI: Linux 3.2.0) => /lib/i386-linux-gnu/libc.so.6\n\tlibc.so.6 (libc6,x86-64, OS ABI: Linux 3.2.0) => /lib/x86_64-linux-gnu/libc.so.6\n'; } |
  seed ldconfig two_abis

# --- tracefs_text: /proc/mounts, probe lines, triggers, error_log, stats, states
# (the usual file systems only: nothing about where this machine keeps what)
grep -E '^(proc|sysfs|devtmpfs|tmpfs|devpts|cgroup2?|tracefs|debugfs|nodev|/dev/[a-z0-9]+) /(proc|sys|dev|run|tmp)?' /proc/mounts |
  grep -v ' /mnt' | head -n 30 | seed tracefs_text mounts
printf 'nodev /sys/kernel/tracing tracefs rw,relatime 0 0\ndebugfs /sys/kernel/debug debugfs rw 0 0\n' |
  seed tracefs_text mounts_tracefs
printf 'p:tracekit_123/ev /bin/true:0x0000000000002490\nr:tracekit_1_2/r_vfs_read vfs_read $retval\nr10:kprobes/myretprobe do_sys_openat2\np:tracekit_99999999_1/ev /bin/true:0x0000000000000001\n' |
  seed tracefs_text probe_lines
printf 'tracekit_123_0\ntracekit_12x\ntracekit_1_2_3\ntracekit_\nfoo_12\n' | seed tracefs_text owner_names
printf 'stacktrace:unlimited if common_pid == 1\nstacktrace:count=3 if common_pid == 1\nstacktrace:5 if prev_pid == 2\nhist:keys=pid:vals=hitcount:sort=hitcount:size=2048 if prev_pid == 1 [paused]\nenable_event:sched:sched_wakeup\n# Available triggers:\n' |
  seed tracefs_text triggers
printf '[ 2586.222139] event filter parse error: error: Field not found\n  Command: bogus_field == 1\n                       ^\n[ 2597.614003] trace_uprobe: error: There is already the exact same probe event\n  Command: p:tkexpg/ev1 /bin/true:0x2490\n           ^\n' |
  seed tracefs_text error_log
seed tracefs_text stats <tests/fixtures/ftrace/stats.txt
printf 'my-func.cold.12' | seed tracefs_text probe_name
printf 'D|K' | seed tracefs_text state_letters

# --- event_format: this kernel's format files (no record: make-perf-corpus
# adds formats with raw records)
t=/sys/kernel/tracing mounted=0
if ! grep -q " $t tracefs " /proc/mounts; then
  mount -t tracefs nodev "$t" && mounted=1
fi
for e in sched/sched_switch sched/sched_wakeup sched/sched_process_exec sched/sched_process_fork \
  syscalls/sys_enter_openat syscalls/sys_exit_read raw_syscalls/sys_enter irq/irq_handler_entry \
  timer/hrtimer_start block/block_rq_issue ftrace/kernel_stack ftrace/user_stack ftrace/function \
  ftrace/print ftrace/funcgraph_entry ftrace/bprint kmem/kmalloc kmem/mm_page_alloc \
  signal/signal_generate net/net_dev_xmit skb/kfree_skb workqueue/workqueue_execute_start \
  task/task_rename power/cpu_idle; do
  f=$t/events/$e/format
  [ -r "$f" ] && seed event_format "$(echo "$e" | tr / _)" <"$f"
done
if [ "$mounted" = 1 ]; then umount "$t"; fi
for f in kernel_stack.format sys_enter_getppid.format sys_exit_getppid.format; do
  seed event_format "fixture_${f%.format}" <tests/fixtures/ftrace/$f
done

# --- ftrace_decode: flags, then pages (cpu byte, u16 length, bytes) of the
# recorded cpu1.raw: each page alone, all three in order, paired or not.
raw=tests/fixtures/ftrace/cpu1.raw
page() { printf '\x01\x00\x10'; dd if=$raw bs=4096 skip="$1" count=1 status=none; }
for p in 0 1 2; do
  { printf '\x03'; page $p; } | seed ftrace_decode "page${p}_pair_strip"
done
{ printf '\x03'; page 0; page 1; page 2; } | seed ftrace_decode all_pair_strip
{ printf '\x01'; page 0; page 1; page 2; } | seed ftrace_decode all_pair
{ printf '\x00'; page 1; page 2; } | seed ftrace_decode nopair
{ printf '\x03'; printf '\x01\x40\x00'; dd if=$raw bs=64 count=1 status=none; } | seed ftrace_decode short_page

# --- command: flags byte (1: a required positional), NUL-separated arguments
i=0
while IFS= read -r line; do
  i=$((i + 1))
  { printf '\x00'; printf '%s' "$line" | tr ' ' '\0'; } | seed command "args_$i"
done <<'EOF'
-F 99 -f 30
-adf -p 185,186 10
-Ti 5
-F99
--frequency=99 --folded
--stack-storage-size 1024 -- -5
-m 1000 -x 0.25 --state 2
-h
--help -F abc
-F
--folded=1
-z
--freq 9
-F 99999999999
-x nan
-x 1e308 -m -5
a b c
EOF
{ printf '\x01'; printf '%s\0' vfs_read -F 5 2.5; } | seed command required
{ printf '\x01'; printf -- '-f'; } | seed command required_missing

echo "make-corpus: $(find $c -type f | wc -l) files in $c"
