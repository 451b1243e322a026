// Kernel interfaces newer than the oldest headers the addon builds against
// (glibc 2.28-era sysroots): system call numbers and argument structs of
// openat2(2) (Linux 5.6), cachestat(2) (Linux 6.5) and the part of io_uring
// (Linux 5.1; multishot poll 5.13) that pending_changes.cc uses, as
// <linux/openat2.h>, <linux/mman.h> and <linux/io_uring.h> define them.
#pragma once

#include <sys/syscall.h>

#include <cstdint>

#ifndef __NR_openat2
#define __NR_openat2 437  // the same number on every architecture that has it
#endif
#ifndef __NR_cachestat
#define __NR_cachestat 451  // the same number on every architecture that has it
#endif
#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup 425  // the same number on every architecture that has it
#endif
#ifndef __NR_io_uring_enter
#define __NR_io_uring_enter 426
#endif

namespace zcopy {

// struct open_how
struct OpenHow {
  uint64_t flags;
  uint64_t mode;
  uint64_t resolve;
};
constexpr uint64_t kResolveNoMagiclinks = 0x02;
constexpr uint64_t kResolveBeneath = 0x08;

// struct cachestat_range and struct cachestat
struct CachestatRange {
  uint64_t off;
  uint64_t len;
};
struct Cachestat {
  uint64_t nr_cache;
  uint64_t nr_dirty;
  uint64_t nr_writeback;
  uint64_t nr_evicted;
  uint64_t nr_recently_evicted;
};

// struct io_sqring_offsets, io_cqring_offsets, io_uring_params
struct IoSqringOffsets {
  uint32_t head, tail, ring_mask, ring_entries, flags, dropped, array, resv1;
  uint64_t user_addr;
};
struct IoCqringOffsets {
  uint32_t head, tail, ring_mask, ring_entries, overflow, cqes, flags, resv1;
  uint64_t user_addr;
};
struct IoUringParams {
  uint32_t sq_entries, cq_entries, flags, sq_thread_cpu, sq_thread_idle, features, wq_fd, resv[3];
  IoSqringOffsets sq_off;
  IoCqringOffsets cq_off;
};
static_assert(sizeof(IoUringParams) == 120, "struct io_uring_params");

// struct io_uring_sqe, as a poll request fills it, and struct io_uring_cqe
struct IoUringSqe {
  uint8_t opcode, flags;
  uint16_t ioprio;
  int32_t fd;
  uint64_t off, addr;
  uint32_t len;
  uint32_t poll32_events;
  uint64_t user_data;
  uint64_t resv[3];
};
static_assert(sizeof(IoUringSqe) == 64, "struct io_uring_sqe");
struct IoUringCqe {
  uint64_t user_data;
  int32_t res;
  uint32_t flags;
};
static_assert(sizeof(IoUringCqe) == 16, "struct io_uring_cqe");

constexpr uint64_t kIoringOffSqRing = 0;
constexpr uint64_t kIoringOffCqRing = 0x8000000;
constexpr uint64_t kIoringOffSqes = 0x10000000;
constexpr uint32_t kIoringSetupCqsize = 1U << 3;
constexpr uint32_t kIoringFeatSingleMmap = 1U << 0;
constexpr uint8_t kIoringOpPollAdd = 6;
constexpr uint32_t kIoringPollAddMulti = 1U << 0;  // in the sqe's len
constexpr uint32_t kIoringCqeFMore = 1U << 1;
constexpr uint32_t kIoringEnterGetevents = 1U << 0;
constexpr uint32_t kIoringSqCqOverflow = 1U << 1;

}  // namespace zcopy
