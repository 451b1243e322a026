// File to file: copy_file_range(2) with its fallbacks. Used by TransferCore
// (transfer_core.cc): CopyChunk() replaces its sendfile(2) call for a file
// destination. The ends a transfer is given as paths are opened before, in
// descriptors.cc. Plain system calls, no Node-API.
#pragma once

#include <sys/types.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>

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

// Whether a transfer's failure with this errno means "the kernel cannot do it
// for this pair" (lib/engine/pipe-file.js then copies in JavaScript): the descriptors
// a transfer opened are then kept for that copy rather than closed.
inline bool IsUnsupported(int error) {
  return error == EINVAL || error == ENOSYS || error == EOPNOTSUPP;
}

}  // namespace zcopy
