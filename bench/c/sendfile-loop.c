/*
 * The reference for bench/engine.js: a plain C sendfile(2) loop.
 *
 *   sendfile-loop FILE    (a connected socket on fd 3)
 *
 * For every byte read from stdin, sends all of FILE to fd 3 with sendfile(2),
 * waiting with poll(2) whenever the (non-blocking) socket is full, then writes
 * that byte back to stdout. Exits 0 at the end of stdin, 1 on any error.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#define SOCKET_FD 3

static void wait_for(int fd, short events) {
  struct pollfd pfd = { .fd = fd, .events = events, .revents = 0 };
  while (poll(&pfd, 1, -1) < 0 && errno == EINTR) {}
}

/* Reads one byte from stdin: 1 on success, 0 at end of input, -1 on error. */
static int read_request(char *byte) {
  for (;;) {
    ssize_t n = read(STDIN_FILENO, byte, 1);
    if (n >= 0) return (int)n;
    if (errno == EINTR) continue;
    if (errno == EAGAIN) { wait_for(STDIN_FILENO, POLLIN); continue; }
    return -1;
  }
}

static int send_whole_file(int in, off_t size) {
  off_t offset = 0;
  while (offset < size) {
    ssize_t n = sendfile(SOCKET_FD, in, &offset, (size_t)(size - offset));
    if (n > 0) continue;
    if (n == 0) { fprintf(stderr, "sendfile-loop: the file ended early\n"); return -1; }
    if (errno == EINTR) continue;
    if (errno == EAGAIN) { wait_for(SOCKET_FD, POLLOUT); continue; }
    perror("sendfile-loop: sendfile");
    return -1;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: sendfile-loop FILE (with a connected socket on fd 3)\n");
    return 1;
  }
  int in = open(argv[1], O_RDONLY);
  struct stat st;
  if (in < 0 || fstat(in, &st) < 0) {
    perror(argv[1]);
    return 1;
  }
  char byte;
  int status;
  while ((status = read_request(&byte)) == 1) {
    if (send_whole_file(in, st.st_size) < 0) return 1;
    if (write(STDOUT_FILENO, &byte, 1) != 1) return 1;
  }
  return status < 0 ? 1 : 0;
}
