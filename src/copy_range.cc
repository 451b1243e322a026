#include "copy_range.h"

#include <fcntl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>  // S_ISREG and friends; the stat itself is FileStat()
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>

#include "file_stat.h"

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

int OpenRetrying(const char* path, int flags, mode_t mode) {
  int fd;
  do {
    fd = open(path, flags, mode);
  } while (fd < 0 && errno == EINTR);
  return fd;
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

namespace {

void Fail(OpenedEnds* result, int error, const char* syscall, const char* path) {
  result->in.Reset();
  result->out.Reset();
  result->error = error;
  result->syscall = syscall;
  result->path = path;
}

}  // namespace

void OpenSourcePath(const OpenSpec& spec, OpenedEnds* result) {
  if (spec.source_path == nullptr) return;
  int fd = OpenRetrying(spec.source_path, O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0) return Fail(result, errno, "open", spec.source_path);
  result->in = UniqueFd(fd);
  FileStatus st;
  if (int err = FileStat(fd, &st)) return Fail(result, err, "fstat", spec.source_path);
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
  int fd = OpenRetrying(spec.destination_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) return Fail(result, errno, "open", spec.destination_path);
  result->out = UniqueFd(fd);
  FileStatus st;
  if (int err = FileStat(fd, &st)) return Fail(result, err, "fstat", spec.destination_path);
  if (!S_ISREG(st.mode)) result->not_regular = true;  // /dev/null, a FIFO: see lib/engine/pipe-file.js
}

napi_value NotRegularError(napi_env env) {
  napi_value code = nullptr;
  napi_value message = nullptr;
  napi_value error = nullptr;
  if (napi_create_string_latin1(env, "ERR_ZCOPY_NOT_REGULAR", NAPI_AUTO_LENGTH, &code) != napi_ok ||
      napi_create_string_latin1(env, "Not a regular file: handed to the JavaScript copy", NAPI_AUTO_LENGTH, &message) !=
          napi_ok ||
      napi_create_error(env, code, message, &error) != napi_ok) {
    return nullptr;
  }
  return error;
}

}  // namespace zcopy
