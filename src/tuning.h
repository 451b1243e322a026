// The figures a transfer is tuned by: how much one system call, one pool job and
// one turn of the event loop move, how long a pool thread may wait for a reader,
// how much a TCP socket keeps unsent. Used by TransferCore (transfer_core.cc)
// and the descriptor probing (descriptors.cc).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>

namespace zcopy {

// Linux moves at most this much per sendfile(2) call.
constexpr int64_t kMaxSendfileCount = 0x7ffff000;

// At most this much is sent straight from the event loop at a time, when the
// whole of it is in the page cache: small responses then cost no thread-pool
// round trip, and a busy pool none per part of a big one (SendNext).
constexpr int64_t kEagerLimit = 256 * 1024;

// A pool job sending to a socket or pipe that fills waits for it right there
// (poll(2)) for at most this long before handing the wait to the event loop. A
// reader that keeps up frees room well within it, and the job goes on as a plain
// C sendfile loop would, instead of paying a pool→loop→pool round trip (two
// thread wake-ups on a busy machine) for every full socket buffer. A reader that
// does not is left to the event loop (see waits_in_pool_): no thread is parked
// on it, and at most one wait this long is lost for each time it looked fast.
constexpr uint64_t kPoolWaitNs = 1'000'000;

// A pool job sending to a socket or pipe returns after this long (checked
// between sendfile calls of at most `chunk` bytes), so that fs, dns.lookup and
// zlib work queued behind it gets a thread and abort and teardown stay prompt.
// Bounded by time rather than bytes: a job's bytes are what its reader took.
constexpr uint64_t kJobBudgetNs = 4'000'000;

// A TCP destination of a transfer longer than this keeps at most this much
// unsent in its send buffer (TCP_NOTSENT_LOWAT: the socket reports writable, and
// takes more, only below it). Without a limit a socket takes up to its whole
// send buffer (4 MiB) beyond what the peer's window lets out, and that backlog
// is transmitted from the peer's ACKs, in the receiver's softirq work rather
// than the sender's, and a loopback client spends its time sending the
// server's bytes (the measurement: docs/benchmarks-log.md, "Tuning constants
// of the addon"). Bytes in flight are not limited, only the queue behind
// them, so a long fat path still fills.
constexpr int kUnsentLimit = 256 * 1024;

// The pool is busy, for SendNext, from this many stream jobs per thread: with
// one (four jobs for four threads), sending from the event loop cost requests
// at 1 MiB; with two it cost none and gained with 256 connections (the
// measurement: docs/benchmarks-log.md, "Tuning constants of the addon").
constexpr int kBusyJobsPerThread = 2;

// The size of libuv's thread pool: UV_THREADPOOL_SIZE, 4 when unset, at most
// 1024 (read once, as libuv reads it when the pool starts).
inline int PoolThreads() {
  static const int threads = [] {
    const char* value = getenv("UV_THREADPOOL_SIZE");
    const int n = value != nullptr ? atoi(value) : 0;
    return n > 0 ? std::min(n, 1024) : 4;
  }();
  return threads;
}

}  // namespace zcopy
