// What a transfer asks the kernel about the descriptors it is given, and the
// private copies it makes of them: the destination's kind, read once per
// transfer (Describe); the private duplicate of each end (DuplicateSource,
// DuplicateDestination); a TCP destination's unsent limit (LimitUnsent);
// whether a range of the source is in the page cache (RangeCached). Plain
// system calls, no Node-API; used by TransferCore (transfer_core.cc). The ends
// a transfer is given as paths are opened in copy_range.cc instead.
#pragma once

#include <sys/stat.h>  // S_ISREG and friends; the stat itself is FileStat()

#include <cstdint>

#include "unique_fd.h"

namespace zcopy {

// How the private destination descriptor takes bytes; decided once, at start.
enum class Sink {
  kFile,    // regular file or anything blocking: the pool thread writes, bounded per chunk
  kStream,  // non-blocking socket or pipe: EAGAIN waits for writability on the event loop
};

// What the caller's destination descriptor is, read once per transfer (one stat,
// one F_GETFL): whether the event loop may write to it (IsNonBlockingStream),
// how its private duplicate takes bytes (DuplicateDestination), and whether it
// is a socket whose unsent bytes to limit (LimitUnsent).
struct Destination {
  int error = 0;  // errno of the stat or F_GETFL, reported by DuplicateDestination
  unsigned mode = 0;
  bool nonblocking = false;
};

Destination Describe(int fd);

// Private duplicate of the destination `fd` (described by Describe), and how it
// takes bytes: a dup(2), or for a blocking pipe or device a non-blocking reopen
// of it through /proc (a new open file description of the same file).
int DuplicateDestination(int fd, const Destination& destination, UniqueFd* out, Sink* sink);

// Whether the destination is a socket or pipe that never blocks: the only kind
// the eager path writes to from the event loop.
inline bool IsNonBlockingStream(const Destination& destination) {
  return destination.error == 0 && !S_ISREG(destination.mode) && !S_ISBLK(destination.mode) && destination.nonblocking;
}

// Lowers a TCP socket's TCP_NOTSENT_LOWAT to kUnsentLimit, unless it is already
// as low, by the application's choice or the system's. The option belongs to the
// socket, so it stays after the transfer. Called for sockets only (a pipe or a
// file has nothing to ask); a socket that is not TCP, or a kernel without the
// option, is left as it is.
void LimitUnsent(int fd);

// Private duplicate (dup(2)) of the source `fd`. A directory is refused here with EISDIR
// (sendfile would say EINVAL), unless `sent_from` is true: sendfile has already
// read from it, so it is none.
int DuplicateSource(int fd, bool sent_from, UniqueFd* in);

// Whether every page of the range is in the page cache (cachestat(2), Linux
// 6.5+), so that sendfile from it cannot wait for the disk. False when unknown.
bool RangeCached(int fd, int64_t offset, int64_t length);

}  // namespace zcopy
