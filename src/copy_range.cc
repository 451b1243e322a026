#include "copy_range.h"

#include <fcntl.h>  // loff_t (musl declares it here)
#include <sys/sendfile.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>

namespace zcopy {

namespace {

// Set once the kernel says it has no copy_file_range (ENOSYS, Linux < 4.5 or a
// seccomp profile that hides it): later transfers go straight to sendfile.
std::atomic<bool> copy_file_range_missing{false};

// The raw system call, not glibc's wrapper: glibc 2.27 to 2.29 emulate it with
// read/write in user space when the kernel lacks it, which is not zero-copy and
// would hide the ENOSYS this code falls back on.
ssize_t CopyFileRange(int in, loff_t* in_offset, int out, size_t count) {
#ifdef __NR_copy_file_range
  return static_cast<ssize_t>(
      syscall(__NR_copy_file_range, in, in_offset, out, static_cast<loff_t*>(nullptr), count, 0u));
#else
  (void)in;
  (void)in_offset;
  (void)out;
  (void)count;
  errno = ENOSYS;
  return -1;
#endif
}

}  // namespace

ssize_t CopyChunk(int out, int in, off_t* offset, size_t count, CopyMethod* method) {
  if (*method == CopyMethod::kCopyFileRange) {
    if (!copy_file_range_missing.load(std::memory_order_relaxed)) {
      loff_t in_offset = *offset;
      const ssize_t n = CopyFileRange(in, &in_offset, out, count);
      if (n > 0) {
        *offset = static_cast<off_t>(in_offset);
        return n;
      }
      if (n < 0 && errno == EINTR) return -1;
      if (n < 0 && errno == ENOSYS) copy_file_range_missing.store(true, std::memory_order_relaxed);
    }
    // Refused for this pair (EXDEV, EINVAL, EOPNOTSUPP, EBADF for O_APPEND...), or
    // nothing copied (the end of the source, or a filesystem that copies nothing
    // where sendfile would): sendfile answers this call and the rest.
    *method = CopyMethod::kSendfile;
  }
  return sendfile(out, in, offset, count);
}

}  // namespace zcopy
