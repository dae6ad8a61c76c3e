# tests/vm/block.sh: iosnoop, iolatency and bitesize on the guest's NVMe
# drive (/dev/nvme0n1, 259,0 or whatever its dev file says), from the
# block tracepoints of the kernel. The truth: the blockio workload makes 23
# O_DIRECT writes of 8192 bytes and 31 reads of 4096 bytes, one request
# each, nothing else touching the drive.

# On a kernel whose driver for the drive takes bios, not requests (no
# /sys/block/DEV/mq and "none" in queue/scheduler: NVMe before 3.19, as in
# the upstream 3.10 image), the block_rq_* tracepoints never fire for it:
# each case checks instead that the tool refuses (bio_based).

DEV=nvme0n1

# bio_based CMD...: 1 where the drive has a request queue; else checks that
# CMD refuses clearly and leaves nothing, and returns 0.
bio_based() {
  local rc=0
  [ -e /sys/block/$DEV/mq ] && return 1
  [ "$(cat /sys/block/$DEV/queue/scheduler)" = none ] || return 1
  step "$DEV takes bios (no mq, no scheduler): $* must refuse"
  rm -f /tmp/blk.out /tmp/blk.err
  "$@" > /tmp/blk.out 2> /tmp/blk.err || rc=$?
  [ "$rc" -eq 1 ] || fail "$1 exited with $rc on a bio-based drive: $(tail -n 3 /tmp/blk.err)"
  has /tmp/blk.err "^$1: $DEV takes bios, not requests .*block_rq_\* tracepoints never fire" \
    "the refusal naming the bio-based drive"
  [ ! -s /tmp/blk.out ] || fail "output before the refusal: $(head -n 3 /tmp/blk.out)"
  ! ls "$T/instances" | grep -q tracekit || fail "an instance left: $(ls "$T/instances")"
  return 0
}

# run_block OUT HEADER_REGEX CMD...: CMD (an argument PID: the workload's)
# over the workload's I/O, ended by SIGINT once the workload is done.
run_block() {
  local out=$1 header=$2 tool a
  shift 2
  start_workload blockio /dev/$DEV 23 31 8192 4096
  for a in "$@"; do
    [ "$a" = PID ] && a=$WL_PID
    set -- "$@" "$a"
    shift
  done
  rm -f "$out" "$out.err"
  "$@" > "$out" 2> "$out.err" &
  tool=$!
  defer "kill $tool 2>/dev/null"
  wait_for "$out" "$header"
  kill -USR1 "$WL_PID"
  wait_for "$WL_OUT" '^(done|failed)'
  has "$WL_OUT" '^done$' "the workload's I/O done"
  sleep 1
  kill -INT "$tool"
  wait "$tool" || fail "$1 exited with $?: $(tail -n 3 "$out.err")"
}

# io_rows OUT: the rows (COMM PID TYPE DEV BLOCK BYTES LATms) of the drive.
io_rows() { awk 'NF == 7 && $4 ~ /^[0-9]+,[0-9]+$/' "$1"; }

# check_io OUT: every request of the workload once, with its type and size,
# and nothing else on the drive.
check_io() {
  local w r all
  w=$(io_rows "$1" | awk '$3 ~ /^W/ && $6 == 8192' | wc -l)
  r=$(io_rows "$1" | awk '$3 ~ /^R/ && $6 == 4096' | wc -l)
  all=$(io_rows "$1" | wc -l)
  [ "$w" -eq 23 ] && [ "$r" -eq 31 ] && [ "$all" -eq 54 ] ||
    { head -n 20 "$1"; fail "$w writes of 8192, $r reads of 4096, $all rows; expected 23, 31, 54"; }
}

# Every request of the drive, with its type and size. The COMM and PID are
# the issuing task's, as perf-tools' (block_rq_issue): on 4.4's blk-mq
# the O_DIRECT writes are issued from kworker threads.
case_iosnoop_exact() {
  bio_based iosnoop -d $DEV && return 0
  run_block /tmp/io.out '^COMM ' iosnoop -d $DEV
  check_io /tmp/io.out
}

# -Q -p: the time queued too, the requests of the workload's process (the
# insert or issue of the submitting task).
case_iosnoop_queued_pid() {
  bio_based iosnoop -Q -d $DEV && return 0
  run_block /tmp/io.out '^COMM ' iosnoop -Q -p PID
  check_io /tmp/io.out
}

# The latency histograms count every request once.
case_iolatency_exact() {
  bio_based iolatency -d $DEV && return 0
  run_block /tmp/il.out '^Tracing' iolatency -d $DEV
  local n
  n=$(awk -F: '/->/ { split($2, a, "|"); s += a[1] } END { print s + 0 }' /tmp/il.out)
  [ "$n" -eq 54 ] || { head -n 30 /tmp/il.out; fail "$n requests in the histograms, expected 54"; }
}

# Sizes: 31 in 1.0 -> 7.9 Kbytes, 23 in 8.0 -> 63.9.
case_bitesize_exact() {
  bio_based bitesize -d $DEV && return 0
  run_block /tmp/bs.out 'Ctrl-C' bitesize -d $DEV
  has /tmp/bs.out '^ +1\.0 -> 7\.9 +: 31 ' "31 I/O of 1.0 -> 7.9 Kbytes"
  has /tmp/bs.out '^ +8\.0 -> 63\.9 +: 23 ' "23 I/O of 8.0 -> 63.9 Kbytes"
}
