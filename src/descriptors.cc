#include "descriptors.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <utility>

#include "file_stat.h"
#include "linux_abi.h"
#include "tuning.h"

namespace zcopy {

namespace {

std::atomic<bool> cachestat_missing{false};

// The file type of a descriptor (see file_stat.h).
int FileMode(int fd, unsigned* mode) {
  FileStatus status;
  if (int err = FileStat(fd, &status)) return err;
  *mode = status.mode;
  return 0;
}

int DupCloexec(int fd, UniqueFd* out) {
  int copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (copy < 0) return errno;
  *out = UniqueFd(copy);
  return 0;
}

// A blocking pipe or character device gets a private non-blocking open file
// description through /proc, so that writability can be awaited on the event
// loop without changing the caller's descriptor (O_NONBLOCK is per description).
int ReopenNonBlocking(int fd, UniqueFd* out) {
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
  int copy = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (copy < 0) return errno;
  *out = UniqueFd(copy);
  return 0;
}

// The system's TCP_NOTSENT_LOWAT (net.ipv4.tcp_notsent_lowat), which a socket
// without its own follows; read once. Unlimited when it cannot be read.
unsigned SystemUnsentLimit() {
  static const unsigned limit = [] {
    unsigned value = UINT32_MAX;
    if (FILE* file = std::fopen("/proc/sys/net/ipv4/tcp_notsent_lowat", "re")) {
      if (std::fscanf(file, "%u", &value) != 1) value = UINT32_MAX;
      std::fclose(file);
    }
    return value;
  }();
  return limit;
}

// open(2), called again on EINTR (a FIFO's open waits, and a signal may come).
UniqueFd OpenRetrying(const char* path, int flags, mode_t mode) {
  int fd;
  do {
    fd = open(path, flags, mode);
  } while (fd < 0 && errno == EINTR);
  return UniqueFd(fd);
}

// Records a failed open of a transfer's ends; nothing is left open.
void Fail(OpenedEnds* result, int error, const char* syscall, const char* path) {
  result->in.Reset();
  result->out.Reset();
  result->error = error;
  result->syscall = syscall;
  result->path = path;
}

}  // namespace

bool RangeCached(int fd, int64_t offset, int64_t length) {
  if (length <= 0 || cachestat_missing.load(std::memory_order_relaxed)) return false;
  CachestatRange range{static_cast<uint64_t>(offset), static_cast<uint64_t>(length)};
  Cachestat stat{};
  if (syscall(__NR_cachestat, fd, &range, &stat, 0) != 0) {
    if (errno == ENOSYS) cachestat_missing.store(true, std::memory_order_relaxed);
    return false;
  }
  static const int64_t page = sysconf(_SC_PAGESIZE);
  const int64_t pages = (offset + length - 1) / page - offset / page + 1;
  return stat.nr_cache >= static_cast<uint64_t>(pages);
}

Destination Describe(int fd) {
  Destination destination;
  if ((destination.error = FileMode(fd, &destination.mode)) != 0) return destination;
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0) {
    destination.error = errno;
  } else {
    destination.nonblocking = (flags & O_NONBLOCK) != 0;
  }
  return destination;
}

int DuplicateDestination(int fd, const Destination& destination, UniqueFd* out, Sink* sink) {
  if (destination.error != 0) return destination.error;
  const unsigned mode = destination.mode;
  if (S_ISREG(mode) || S_ISBLK(mode)) {
    *sink = Sink::kFile;
    return DupCloexec(fd, out);
  }
  if (destination.nonblocking) {
    *sink = Sink::kStream;
    return DupCloexec(fd, out);
  }
  if (!S_ISSOCK(mode) && ReopenNonBlocking(fd, out) == 0) {
    *sink = Sink::kStream;
    return 0;
  }
  // A blocking socket (Node never makes one) or a pipe /proc cannot reopen:
  // written with blocking calls from the pool, one bounded chunk per job.
  *sink = Sink::kFile;
  return DupCloexec(fd, out);
}

void LimitUnsent(int fd) {
  int own = 0;  // 0: none of its own, the system's applies
  socklen_t size = sizeof own;
  if (getsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &own, &size) != 0) return;
  const unsigned current = own != 0 ? static_cast<unsigned>(own) : SystemUnsentLimit();
  if (current <= static_cast<unsigned>(kUnsentLimit)) return;
  setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &kUnsentLimit, sizeof kUnsentLimit);
}

int DuplicateSource(int fd, bool sent_from, UniqueFd* in) {
  if (!sent_from) {
    unsigned mode = 0;
    if (int err = FileMode(fd, &mode)) return err;
    if (S_ISDIR(mode)) return EISDIR;
  }
  return DupCloexec(fd, in);
}

void OpenSourcePath(const OpenSpec& spec, OpenedEnds* result) {
  if (spec.source_path == nullptr) return;
  UniqueFd fd = OpenRetrying(spec.source_path, O_RDONLY | O_CLOEXEC, 0);
  if (!fd.Valid()) return Fail(result, errno, "open", spec.source_path);
  result->in = std::move(fd);
  FileStatus st;
  if (int err = FileStat(result->in.Get(), &st)) return Fail(result, err, "fstat", spec.source_path);
  // As lib/engine/source.js's byteRange: a directory fails as a read would.
  if (S_ISDIR(st.mode)) return Fail(result, EISDIR, "read", nullptr);
  if (!S_ISREG(st.mode)) {
    result->not_regular = true;  // a pipe or a device: no length; JavaScript copies it
    return;
  }
  const int64_t size = st.size;
  const int64_t last = spec.end < 0 ? size - 1 : std::min(spec.end, size - 1);
  result->length = std::max<int64_t>(0, last - spec.start + 1);
}

void OpenDestinationPath(const OpenSpec& spec, OpenedEnds* result) {
  if (spec.destination_path == nullptr || result->error != 0 || result->not_regular) return;
  UniqueFd fd = OpenRetrying(spec.destination_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (!fd.Valid()) return Fail(result, errno, "open", spec.destination_path);
  result->out = std::move(fd);
  FileStatus st;
  if (int err = FileStat(result->out.Get(), &st)) return Fail(result, err, "fstat", spec.destination_path);
  if (!S_ISREG(st.mode)) result->not_regular = true;  // /dev/null, a FIFO: see lib/engine/pipe-file.js
}

}  // namespace zcopy
