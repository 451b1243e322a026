// File to file: copy_file_range(2) with its fallbacks, and the opening of a
// transfer's ends by path on a pool thread (so that a small path-to-path copy
// costs one thread-pool job, open + copy + close, as fs.copyFile does).
//
// Used by TransferCore (transfer.cc): CopyChunk() replaces its sendfile(2) call,
// OpenSourcePath() and OpenDestinationPath() are the first step of a transfer
// given paths. Nothing here touches Node-API but NotRegularError().
#pragma once

#include <node_api.h>
#include <sys/types.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "unique_fd.h"

namespace zcopy {

// How a transfer moves file bytes; starts as kCopyFileRange for a regular-file
// (or blocking) destination and drops to kSendfile, for the rest of that
// transfer, the first time the kernel refuses copy_file_range for the pair.
enum class CopyMethod : uint8_t { kCopyFileRange, kSendfile };

// One call moving at most `count` bytes of `in` from *offset to `out` at out's
// file position (advancing both, as sendfile does). Returns the bytes moved,
// 0 at the end of the source, or -1 with errno set (EINTR: call again).
// copy_file_range is tried first when `*method` says so; when it fails (EXDEV
// across filesystems, EINVAL/EOPNOTSUPP/ENOSYS/EBADF for a pair it cannot do,
// or any other error) or copies nothing, the same call is made with sendfile,
// whose answer is the truth, and `*method` becomes kSendfile. A failed
// copy_file_range moved no byte, so nothing is lost or written twice.
ssize_t CopyChunk(int out, int in, off_t* offset, size_t count, CopyMethod* method);

// What a transfer opens by path, with the source range still to fix (the
// source's size is only known once it is open). Paths are NUL-terminated and
// owned by the caller; null when that end is a descriptor.
struct OpenSpec {
  const char* source_path = nullptr;
  const char* destination_path = nullptr;
  int64_t start = 0;
  int64_t end = -1;  // inclusive; -1: to the end of the file
};

// A path as the JS wrapper received it (UTF-8 or a Buffer's bytes, no NUL:
// lib/engine/pipe-file.js checks), for TransferCore::New to copy; `given` false when
// that end is a descriptor.
struct Path {
  bool given = false;
  const char* data = nullptr;
  size_t length = 0;

  size_t Size() const { return given ? length + 1 : 0; }
  // Copies the bytes and a NUL to *at and moves *at past them; → the copy, or
  // null when not given.
  const char* CopyTo(char** at) const {
    if (!given) return nullptr;
    char* copy = *at;
    if (length > 0) std::memcpy(copy, data, length);
    copy[length] = '\0';
    *at += length + 1;
    return copy;
  }
};

// What OpenSourcePath/OpenDestinationPath did. On success `in`/`out` hold the
// descriptors they opened (a side given as a descriptor stays empty) and
// `length` is the range's length (source path only). `not_regular`: one of the ends it opened is not a regular
// file (a FIFO, a device); the caller hands the descriptors to JavaScript,
// which has the paths for those. `error`/`syscall`/`path` describe a failure,
// after which nothing is left open.
struct OpenedEnds {
  UniqueFd in;
  UniqueFd out;
  int64_t length = -1;
  bool not_regular = false;
  int error = 0;
  const char* syscall = nullptr;
  const char* path = nullptr;
};

// Opens the source path (O_RDONLY), checks it and fixes the range; nothing
// without a source path. Blocking (a FIFO waits for a writer); runs on a pool
// thread.
void OpenSourcePath(const OpenSpec& spec, OpenedEnds* result);

// Then the destination path (O_WRONLY | O_CREAT | O_TRUNC, 0666 & ~umask, as
// fs.open(path, 'w')), only once the source is known good; nothing without a
// destination path. Blocking (a FIFO waits for a reader); pool thread.
void OpenDestinationPath(const OpenSpec& spec, OpenedEnds* result);

// The rejection of a transfer that stopped to hand the descriptors it opened to
// JavaScript (code ERR_ZCOPY_NOT_REGULAR; never seen by users).
napi_value NotRegularError(napi_env env);

// Whether a transfer's failure with this errno means "the kernel cannot do it
// for this pair" (lib/engine/pipe-file.js then copies in JavaScript): the descriptors
// a transfer opened are then kept for that copy rather than closed.
inline bool IsUnsupported(int error) {
  return error == EINVAL || error == ENOSYS || error == EOPNOTSUPP;
}

}  // namespace zcopy
