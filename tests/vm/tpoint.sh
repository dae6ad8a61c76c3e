# tests/vm/tpoint.sh: tpoint on the guest kernel: a tracepoint in a private
# instance, its lines as the kernel prints them. The truth: 5 execs of the
# static true.

case_tpoint_exec_exact() {
  local out=/tmp/tp.out tool i n
  rm -f "$out" "$out.err"
  tpoint sched:sched_process_exec > "$out" 2> "$out.err" &
  tool=$!
  defer "kill $tool 2>/dev/null"
  wait_for "$out" 'Ctrl-C to end'
  for i in 1 2 3 4 5; do /tracekit/build/workloads/shortlived 0 > /dev/null 2>&1; done
  sleep 1
  kill -INT "$tool"
  wait "$tool" || fail "tpoint exited with $?: $(tail -n 3 "$out.err")"
  n=$(grep -c 'sched_process_exec: filename=/tracekit/build/workloads/shortlived ' "$out")
  [ "$n" -eq 5 ] || { head -n 20 "$out"; fail "$n exec lines of shortlived, expected 5"; }
}
