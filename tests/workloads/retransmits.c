/* TCP retransmits made on purpose, with the kernel's own count of them.
 *
 * usage: retransmits 4|6 [drop_ms]
 *
 * In a network namespace of its own (unshare: the host's network is never
 * touched), with only the loopback device up, a client connects to a
 * server over 127.0.0.1 (4) or ::1 (6). Says "ready PID" and waits for
 * SIGUSR1. Then two phases, each while a classic socket filter that
 * drops everything is attached to the server's socket (its packets are
 * dropped on arrival, after the client sent them: the client's sends
 * succeed and it retransmits them):
 *   1. ESTABLISHED: the client sends 8 bytes; after drop_ms (default 700)
 *      the filter is removed, and the phase ends when they are acked;
 *   2. FIN_WAIT1: the client shuts down its side (a FIN); after drop_ms
 *      the filter is removed, and the phase ends when the FIN is acked.
 * Prints the connection as the client sees it and, per phase, the deltas of
 * the namespace's TcpRetransSegs (/proc/net/snmp) and TCPLossProbes
 * (/proc/net/netstat; a tail loss probe here, with nothing new to send,
 * retransmits the last segment, without tcp_retransmit_skb):
 *   conn LADDR LPORT RADDR RPORT
 *   established RETRANS PROBES
 *   fin_wait1 RETRANS PROBES
 *   done
 * (then the server closes its side, without drops, and it exits).
 * Writes are small and sent at once (TCP_NODELAY), each segment its own
 * packet, so the count of retransmitted segments is the count of
 * retransmissions. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "workload.h"

static void die(const char* what) {
  fprintf(stderr, "retransmits: %s: %s\n", what, strerror(errno));
  exit(1);
}

static void lo_up(void) {
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  if (fd < 0) die("socket");
  struct ifreq ifr;
  memset(&ifr, 0, sizeof ifr);
  strcpy(ifr.ifr_name, "lo");
  if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0) die("SIOCGIFFLAGS");
  ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
  if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0) die("SIOCSIFFLAGS");
  close(fd);
}

/* A counter of the namespace's from a /proc/net file of "Prefix: names"
 * and "Prefix: values" line pairs (snmp's Tcp:, netstat's TcpExt:). */
static long counter(const char* path, const char* prefix, const char* name) {
  FILE* f = fopen(path, "r");
  if (!f) die(path);
  char names[8192], values[8192];
  long found = -1;
  while (found < 0 && fgets(names, sizeof names, f)) {
    if (strncmp(names, prefix, strlen(prefix)) != 0 || !fgets(values, sizeof values, f)) continue;
    char *sn, *sv;
    char* n = strtok_r(names, " \n", &sn);
    char* v = strtok_r(values, " \n", &sv);
    for (; n && v; n = strtok_r(NULL, " \n", &sn), v = strtok_r(NULL, " \n", &sv))
      if (strcmp(n, name) == 0) found = atol(v);
  }
  fclose(f);
  if (found < 0) {
    fprintf(stderr, "retransmits: no %s %s in %s\n", prefix, name, path);
    exit(1);
  }
  return found;
}

static long retrans_segs(void) { return counter("/proc/net/snmp", "Tcp:", "RetransSegs"); }
static long loss_probes(void) { return counter("/proc/net/netstat", "TcpExt:", "TCPLossProbes"); }

static void set_drop(int fd, int drop) {
  if (drop) {
    struct sock_filter code[] = {BPF_STMT(BPF_RET | BPF_K, 0)};
    struct sock_fprog prog = {1, code};
    if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof prog) < 0)
      die("SO_ATTACH_FILTER");
  } else if (setsockopt(fd, SOL_SOCKET, SO_DETACH_FILTER, &drop, sizeof drop) < 0) {
    die("SO_DETACH_FILTER");
  }
}

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
  }
}

/* Waits (30 s at most) until fd has nothing unacked and, with state, is in
 * that TCP state. */
static void wait_acked(int fd, int state) {
  double end = now() + 30;
  while (now() < end) {
    int outq = 0;
    struct tcp_info ti;
    socklen_t len = sizeof ti;
    if (ioctl(fd, SIOCOUTQ, &outq) < 0) die("SIOCOUTQ");
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) < 0) die("TCP_INFO");
    if (outq == 0 && ti.tcpi_unacked == 0 && (!state || ti.tcpi_state == state)) return;
    sleep_ms(5);
  }
  fprintf(stderr, "retransmits: not acked after 30 s\n");
  exit(1);
}

static void print_addr(int family, const struct sockaddr_storage* ss) {
  char buf[INET6_ADDRSTRLEN];
  if (family == AF_INET) {
    const struct sockaddr_in* a = (const struct sockaddr_in*)ss;
    inet_ntop(AF_INET, &a->sin_addr, buf, sizeof buf);
    printf(" %s %d", buf, ntohs(a->sin_port));
  } else {
    const struct sockaddr_in6* a = (const struct sockaddr_in6*)ss;
    inet_ntop(AF_INET6, &a->sin6_addr, buf, sizeof buf);
    printf(" %s %d", buf, ntohs(a->sin6_port));
  }
}

int main(int argc, char** argv) {
  if (argc < 2 || (strcmp(argv[1], "4") != 0 && strcmp(argv[1], "6") != 0)) {
    fprintf(stderr, "usage: retransmits 4|6 [drop_ms]\n");
    return 2;
  }
  const int family = argv[1][0] == '4' ? AF_INET : AF_INET6;
  const int drop_ms = argc > 2 ? atoi(argv[2]) : 700;
  if (unshare(CLONE_NEWNET) < 0) die("unshare(CLONE_NEWNET)");
  lo_up();

  struct sockaddr_storage ss;
  socklen_t len;
  memset(&ss, 0, sizeof ss);
  if (family == AF_INET) {
    struct sockaddr_in* a = (struct sockaddr_in*)&ss;
    a->sin_family = AF_INET;
    a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    len = sizeof *a;
  } else {
    struct sockaddr_in6* a = (struct sockaddr_in6*)&ss;
    a->sin6_family = AF_INET6;
    a->sin6_addr = in6addr_loopback;
    len = sizeof *a;
  }
  int lfd = socket(family, SOCK_STREAM, 0);
  if (lfd < 0) die("socket");
  /* ::1 may take a moment to be usable after lo comes up (DAD is off on
   * loopback, but be patient). */
  double end = now() + 5;
  while (bind(lfd, (struct sockaddr*)&ss, len) < 0) {
    if (now() > end) die("bind");
    sleep_ms(10);
  }
  if (listen(lfd, 1) < 0) die("listen");
  if (getsockname(lfd, (struct sockaddr*)&ss, &len) < 0) die("getsockname");
  int cfd = socket(family, SOCK_STREAM, 0);
  if (cfd < 0) die("socket");
  int one = 1;
  setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (connect(cfd, (struct sockaddr*)&ss, len) < 0) die("connect");
  int sfd = accept(lfd, NULL, NULL);
  if (sfd < 0) die("accept");
  close(lfd);

  printf("conn");
  struct sockaddr_storage local, peer;
  socklen_t ll = sizeof local, pl = sizeof peer;
  if (getsockname(cfd, (struct sockaddr*)&local, &ll) < 0) die("getsockname");
  if (getpeername(cfd, (struct sockaddr*)&peer, &pl) < 0) die("getpeername");
  print_addr(family, &local);
  print_addr(family, &peer);
  printf("\n");
  if (ready_then_wait_for_go_signal() < 0) die("sigwait");

  long before = retrans_segs(), probes_before = loss_probes();
  set_drop(sfd, 1);
  if (write(cfd, "retrans!", 8) != 8) die("write");
  sleep_ms(drop_ms);
  set_drop(sfd, 0);
  wait_acked(cfd, 0);
  char buf[8];
  if (read(sfd, buf, sizeof buf) != 8) die("read");
  long middle = retrans_segs(), probes_middle = loss_probes();
  printf("established %ld %ld\n", middle - before, probes_middle - probes_before);

  set_drop(sfd, 1);
  if (shutdown(cfd, SHUT_WR) < 0) die("shutdown");
  sleep_ms(drop_ms);
  set_drop(sfd, 0);
  wait_acked(cfd, TCP_FIN_WAIT2);
  printf("fin_wait1 %ld %ld\n", retrans_segs() - middle, loss_probes() - probes_middle);
  /* A quiet end: the server's FIN is acked before the namespace goes. */
  if (shutdown(sfd, SHUT_WR) < 0) die("shutdown");
  wait_acked(sfd, TCP_CLOSE);
  printf("done\n");
  fflush(stdout);
  close(sfd);
  close(cfd);
  return 0;
}
