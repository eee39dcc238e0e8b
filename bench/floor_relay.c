/* The floor for bench/journey_bench.py: a TCP relay of the same design as network/relay.py (one thread, one
 * edge-triggered epoll, a kernel pipe per direction filled and drained with splice(2), half-close passed on),
 * written in C so that what is left is the kernel's own work. It is no part of mini-kube: the bench builds it
 * with the machine's C compiler (skipping the comparison when there is none) to show how much of the cost of a
 * hop is Python's and how much any userspace relay pays.
 *
 *   floor_relay LISTEN_IP LISTEN_PORT TARGET_IP TARGET_PORT [NETNS_PATH]
 * listens on the host, then dials TARGET from inside NETNS_PATH when given (as kube-proxy dials Pods); prints
 * "ready" once listening. Errors reset nothing: a failed connection is simply closed.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define PIPE_SIZE (1 << 20)
#define FLAGS (SPLICE_F_MOVE | SPLICE_F_NONBLOCK)

struct conn;
struct way { int src, dst, rd, wr; long pending; int eof, done, in_ready, out_blocked; struct conn *conn; };
struct side { struct conn *conn; int client; };
struct conn { int client, target, ended, closed; struct way up, down; struct side sides[2]; struct conn *next; };

static struct conn *graveyard; /* closed during this batch of events, freed after it */

static void close_conn(struct conn *c) {
    if (c->closed) return;
    c->closed = 1;
    close(c->client); close(c->target);
    close(c->up.rd); close(c->up.wr); close(c->down.rd); close(c->down.wr);
    c->next = graveyard; graveyard = c;
}

static void pump(struct way *w) {
    while (!w->done && !w->conn->closed) {
        while (w->pending && !w->out_blocked) {
            ssize_t n = splice(w->rd, NULL, w->dst, NULL, w->pending, FLAGS);
            if (n >= 0) w->pending -= n;
            else if (errno == EAGAIN) w->out_blocked = 1;
            else { close_conn(w->conn); return; }
        }
        if (!w->in_ready || w->eof || w->pending >= PIPE_SIZE) break;
        ssize_t n = splice(w->src, NULL, w->wr, NULL, PIPE_SIZE - w->pending, FLAGS);
        if (n > 0) w->pending += n;
        else if (n == 0) w->eof = 1;
        else if (errno != EAGAIN) { close_conn(w->conn); return; }
        else if (!w->pending) { w->in_ready = 0; break; }
        else if (w->out_blocked) break;
    }
    if (w->eof && !w->pending && !w->done && !w->conn->closed) {
        w->done = 1;
        if (++w->conn->ended == 2) close_conn(w->conn);
        else shutdown(w->dst, SHUT_WR);
    }
}

static void init_way(struct way *w, struct conn *c, int src, int dst) {
    int p[2];
    if (pipe2(p, O_NONBLOCK | O_CLOEXEC)) { perror("pipe2"); exit(1); }
    fcntl(p[1], F_SETPIPE_SZ, PIPE_SIZE);
    *w = (struct way){.src = src, .dst = dst, .rd = p[0], .wr = p[1], .in_ready = 1, .conn = c};
}

static void watch(int ep, int fd, void *what, unsigned events) {
    struct epoll_event ev = {.events = events, .data.ptr = what};
    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

int main(int argc, char **argv) {
    if (argc < 5) { fprintf(stderr, "usage: floor_relay LISTEN_IP PORT TARGET_IP PORT [NETNS]\n"); return 2; }
    int one = 1, listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_in at = {.sin_family = AF_INET, .sin_port = htons(atoi(argv[2]))};
    struct sockaddr_in target = {.sin_family = AF_INET, .sin_port = htons(atoi(argv[4]))};
    inet_pton(AF_INET, argv[1], &at.sin_addr);
    inet_pton(AF_INET, argv[3], &target.sin_addr);
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    setsockopt(listener, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (bind(listener, (void *)&at, sizeof at) || listen(listener, 1024)) { perror("listen"); return 1; }
    if (argc > 5) {
        int ns = open(argv[5], O_RDONLY | O_CLOEXEC);
        if (ns < 0 || setns(ns, CLONE_NEWNET)) { perror("setns"); return 1; }
        close(ns);
    }
    int ep = epoll_create1(EPOLL_CLOEXEC);
    watch(ep, listener, NULL, EPOLLIN | EPOLLET);
    printf("ready\n");
    fflush(stdout);
    struct epoll_event events[256];
    for (;;) {
        int n = epoll_wait(ep, events, 256, -1);
        for (int i = 0; i < n; i++) {
            struct side *side = events[i].data.ptr;
            unsigned ev = events[i].events;
            if (side == NULL) {
                int client;
                while ((client = accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
                    int out = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
                    setsockopt(out, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    if (connect(out, (void *)&target, sizeof target) && errno != EINPROGRESS) {
                        close(client); close(out); continue;
                    }
                    struct conn *c = calloc(1, sizeof *c);
                    c->client = client; c->target = out;
                    init_way(&c->up, c, client, out);
                    init_way(&c->down, c, out, client);
                    c->sides[0] = (struct side){c, 1};
                    c->sides[1] = (struct side){c, 0};
                    watch(ep, client, &c->sides[0], EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET);
                    watch(ep, out, &c->sides[1], EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET);
                }
                continue;
            }
            struct conn *c = side->conn;
            struct way *reading = side->client ? &c->up : &c->down, *writing = side->client ? &c->down : &c->up;
            if (ev & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) { reading->in_ready = 1; pump(reading); }
            if (ev & (EPOLLOUT | EPOLLHUP | EPOLLERR)) {
                writing->out_blocked = 0; /* (on the target's side: also the end of the dial) */
                pump(writing);
            }
        }
        while (graveyard) { struct conn *dead = graveyard; graveyard = dead->next; free(dead); }
    }
}
