/* cepoll is corebench's "C epoll" anchor: the Go epoll server (relay.go) in C,
 * one loop in epoll copying the terminal and a PTY both ways, as tmux's
 * libevent loop does, without any language runtime. corebench compiles it
 * with the system's cc when there is one. */
#include <pty.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <termios.h>
#include <unistd.h>
int main(int argc, char **argv) {
	if (argc < 2) return 2;
	struct winsize ws = {.ws_row = 50, .ws_col = 200};
	int m;
	pid_t pid = forkpty(&m, NULL, NULL, &ws);
	if (pid < 0) return 1;
	if (pid == 0) { execl("/bin/sh", "sh", "-c", argv[1], (char *)NULL); _exit(127); }
	struct termios t, old;
	tcgetattr(0, &old); t = old; cfmakeraw(&t); tcsetattr(0, TCSANOW, &t);
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = {.events = EPOLLIN};
	ev.data.fd = 0; epoll_ctl(ep, EPOLL_CTL_ADD, 0, &ev);
	ev.data.fd = m; epoll_ctl(ep, EPOLL_CTL_ADD, m, &ev);
	static char buf[65536];
	struct epoll_event evs[2];
	for (;;) {
		int n = epoll_wait(ep, evs, 2, -1);
		if (n < 0) continue;
		for (int i = 0; i < n; i++) {
			int src = evs[i].data.fd, dst = src == m ? 1 : m;
			ssize_t r = read(src, buf, sizeof buf);
			if (r <= 0) goto out;
			for (ssize_t off = 0; off < r;) {
				ssize_t w = write(dst, buf + off, r - off);
				if (w < 0) goto out;
				off += w;
			}
		}
	}
out:
	tcsetattr(0, TCSANOW, &old);
	return 0;
}
